#!/usr/bin/env bash
# Which kernels cuBLASLt runs for a shape, and how they are launched (grid, cluster, block, registers, shared memory):
# the tile and schedule behind its times, for comparison with ours. On the GPU machine, from the repository root:
#   bash bench/probes/cublaslt_kernels.sh dgrad:4096x512x32768 8192x8192x8192 > $OUT/cublaslt-kernels.txt
# ncu profiles the launches of a short `hopgemm bench` (5 iterations); hopgemm's own kernels, the L2 flush and
# memsets are left out of the listing, each other kernel is listed once per shape.
source bench/probes/ab_lib.sh
for shape in "$@"; do
  echo "== $shape"
  ncu --clock-control none --section LaunchStats --launch-count 400 \
      "$BUILD_DIR/hopgemm" bench --shape "$shape" --iters 5 --out /tmp/cublaslt-kernels.json 2>/dev/null |
    awk '/^  [^ ].*\(.*\)x\(.*\), Context/ { name = $0; keep = (name !~ /sm90_fp8_gemm|l2_sweep|splitk_reduce|memset|sf_layout/) }
         keep && /Block Size|Cluster Size|Grid Size|Registers Per Thread|Dynamic Shared Memory Per Block/ {
           if (!(name in seen)) { seen[name] = 1; print name }
           print "      " $0 }' | awk '!dup[$0]++'
done
