#!/usr/bin/env bash
# On the GPU machine: Nsight Compute profile of the FP8 GEMM kernel for each shape, plus its SASS.
# Usage: scripts/profile_gemm.sh SHAPE [SHAPE...]   SHAPE as in `hopgemm bench --shape`, e.g. wgrad:4096x7168x4096
# Writes $OUT/ncu-<shape>.txt (speed of light, memory, warp stalls, instruction mix; clocks left as they are)
# and $OUT/sass-<shape>.txt (the kernel's SASS from the JIT cache).
set -uo pipefail
cd "$(dirname "$0")/.."
export HOPGEMM_BUILD_DIR=/tmp/hopgemm-build HOPGEMM_CACHE_DIR=/tmp/hopgemm-profile-cache
OUTDIR="${OUT:-/tmp/hopgemm-out}"; mkdir -p "$OUTDIR"
source scripts/setup_env.sh
cmake -S . -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j"$JOBS" --target hopgemm_cli > "$OUTDIR/build.log" 2>&1 || { tail -30 "$OUTDIR/build.log"; exit 1; }
status=0
for shape in "$@"; do
  name="${shape//:/-}"
  rm -rf "$HOPGEMM_CACHE_DIR"
  # Skip the warm-up launches; profile one timed launch of our kernel (the baselines are other kernels).
  ncu --clock-control none --kernel-name regex:sm90_fp8_gemm_kernel --launch-skip 5 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
      --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
      --section InstructionStats \
      "$BUILD_DIR/hopgemm" bench --shape "$shape" --iters 10 > "$OUTDIR/ncu-$name.txt" 2>&1 || status=1
  grep -E "Duration|Throughput|Pipe|Stall|Issued|Busy|L2 Hit|Warp Cycles" "$OUTDIR/ncu-$name.txt" | head -40
  cubin=$(ls -t "$HOPGEMM_CACHE_DIR"/kernels/sm90_fp8_gemm-*/kernel.cubin 2>/dev/null | head -1)
  [ -n "$cubin" ] && cuobjdump --dump-sass "$cubin" > "$OUTDIR/sass-$name.txt" 2>&1
done
exit $status
