#!/usr/bin/env bash
# On the GPU machine: Nsight Compute profile of the FP8 GEMM kernel for each shape, plus its SASS.
# Usage: scripts/profile_gemm.sh SHAPE [SHAPE...]   SHAPE as in `hopgemm bench --shape`, e.g. wgrad:4096x7168x4096
# Writes $OUT/ncu-<shape>.txt (speed of light, memory, warp stalls, instruction mix; clocks left as they are)
# ncu-raw-<shape>.csv (every metric) and ncu-src-<shape>.csv (stall samples per SASS instruction).
set -uo pipefail
cd "$(dirname "$0")/.."
export HOPGEMM_BUILD_DIR=/tmp/hopgemm-build HOPGEMM_CACHE_DIR=/tmp/hopgemm-profile-cache
OUTDIR="${OUT:-/tmp/hopgemm-out}"; mkdir -p "$OUTDIR"
source scripts/setup_env.sh
set +e  # setup_env.sh turns on -e; a profile that fails must not stop the next one
build_cli /tmp/hopgemm-profile-build.log || exit 1
status=0
for shape in "$@"; do
  name="${shape//:/-}"
  rm -rf "$HOPGEMM_CACHE_DIR"
  # Skip the warm-up launches; profile one timed launch of our kernel (the baselines are other kernels).
  ncu --clock-control none --kernel-name regex:sm90_fp8_gemm_kernel --launch-skip 5 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
      --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
      --section InstructionStats --section SourceCounters \
      --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum \
      -f -o "/tmp/ncu-$name" "$BUILD_DIR/hopgemm" bench --shape "$shape" --iters 10 > "$OUTDIR/ncu-$name.log" 2>&1 || status=1
  ncu -i "/tmp/ncu-$name.ncu-rep" --print-details all > "$OUTDIR/ncu-$name.txt" 2>&1
  ncu -i "/tmp/ncu-$name.ncu-rep" --page raw --csv > "$OUTDIR/ncu-raw-$name.csv" 2>&1
  # Per-instruction stall samples next to the SASS (where this ncu can print the source page).
  ncu -i "/tmp/ncu-$name.ncu-rep" --page source --csv --print-source sass > "$OUTDIR/ncu-src-$name.csv" 2>&1 || true
  grep -E "Duration|SM Frequency|Pipe Tensor Cycles Active" "$OUTDIR/ncu-$name.txt"
done
exit $status
