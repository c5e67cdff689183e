#!/usr/bin/env bash
# Runs on branch wip/tail-split (the tail split is not on main).
# Fifteenth session: tail_split=1 ran 8-24% slower than the same pick without it where it changes no work (a unit per
# slot, no piece summed). Time it where the grid has no tail at all (num_sms=128: 256 tiles, two whole rounds), and
# dump both kernels' SASS (nvcc -cubin, cuobjdump) for the mainloop's instructions.
source bench/probes/try_lib.sh
try_configs --rounds 3 4096x2048x7168 "tail_split=1" "num_sms=128" "num_sms=128,tail_split=1"
mkdir -p /tmp/sass && cd /tmp/sass
for t in 0 1; do
  cat > k$t.cu <<EOT
#include <hopgemm/device/kernels/sm90_fp8_gemm.cuh>
static __attribute__((used)) void inst() {
  (void)reinterpret_cast<void*>(&hopgemm::device::sm90_fp8_gemm_kernel<hopgemm::device::Sm90Fp8GemmConfig{.block_m = 256, .block_n = 128, .num_stages = 3, .raster_band = 1, .sfb_regs = 1, .tail_split = $t}>);
}
EOT
  nvcc -std=c++20 -arch=sm_90a -cubin -Xptxas -v -I $HOPGEMM_ROOT/include -o k$t.cubin k$t.cu 2>&1 | grep -E "spill|Used|warn"
  cuobjdump -sass k$t.cubin > $OUT/sass_tail$t.txt
  grep -cE "^\s+/\*[0-9a-f]{4}\*/" $OUT/sass_tail$t.txt
done
