#!/usr/bin/env bash
# Memory-path counters of our kernel (the heuristics' pick and each CONFIG forced through --config) next to
# cuBLASLt's blockwise kernel for the same shape: time, SM clock, DRAM bytes, L2 read sectors and hit rate, traffic
# between the two L2 partitions, L2 throughput, tensor-pipe activity. On the GPU machine, from the repository root:
#   bash bench/probes/ncu_vs_cublaslt.sh dgrad:4096x512x32768 cluster_n=2 > $OUT/ncu-vs-cublaslt.txt
source bench/probes/ab_lib.sh
shape="$1"; shift
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum
metrics+=,lts__t_sectors_op_read.sum,lts__t_sector_op_read_hit_rate.pct,lts__t_requests_op_read.sum
metrics+=,lts__t_sectors_srcunit_ltcfabric.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,l1tex__m_xbar2l1tex_read_bytes.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed
profile() {  # $1: kernel-name regex, $2: launches to skip, then the bench arguments
  local kernel="$1" skip="$2"; shift 2
  ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip "$skip" --launch-count 1 --metrics "$metrics" \
      "$BUILD_DIR/hopgemm" bench --shape "$shape" --iters 10 --out /tmp/ncu-vs.json "$@" 2>/dev/null |
    grep -E "^  [^ ]|gpu__|sm__|dram__|lts__|l1tex__" | cut -c1-160
}
echo "== ours, heuristics' pick"; profile sm90_fp8_gemm_kernel 5
for config in "$@"; do echo "== ours, --config $config"; profile sm90_fp8_gemm_kernel 5 --config "$config"; done
echo "== cuBLASLt blockwise"; profile Ablk128 3
