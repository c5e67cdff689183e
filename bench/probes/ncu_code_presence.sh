#!/usr/bin/env bash
# Fifteenth session: never-executed epilogue code (.device/v_presence) costs the two-warpgroup kernels 3.5-5.5% with an
# identical k-loop in SASS, whichever role comes first (ab-code-presence*.txt). The warps' stall reasons per issued
# instruction, main against v_presence (ncu, clocks as they are): an instruction-fetch effect shows as no_instruction.
export HOPGEMM_BUILD_DIR=/tmp/hopgemm-build
source scripts/setup_env.sh; set +e
build_cli /tmp/ncu-build.log || exit 1
for shape in 4096x2048x7168 4096x512x32768; do
  for side in include .device/v_presence; do
    tag=$(basename "$side")
    HOPGEMM_INCLUDE_DIR="$(realpath "$side")" HOPGEMM_CACHE_DIR="/tmp/ncu-cache-$tag" \
      ncu --clock-control none --kernel-name regex:sm90_fp8_gemm_kernel --launch-skip 5 --launch-count 1 \
      --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,gpu__time_duration.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second' \
      --csv "$BUILD_DIR/hopgemm" bench --shape "$shape" --iters 10 > "/tmp/ncu-$tag-$shape.csv" 2>/dev/null
    echo "== $shape $tag"
    grep -E '"(gpu__time_duration.sum|smsp__inst_executed.sum|sm__cycles_elapsed.avg.per_second|smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active.ratio)"' "/tmp/ncu-$tag-$shape.csv" |
      awk -F'","' '{gsub(/"/, "", $NF); v=$NF+0; if (v > 0.005 || $(NF-2) ~ /duration|inst_executed|per_second/) print $(NF-2), $NF}' |
      sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
  done
done
