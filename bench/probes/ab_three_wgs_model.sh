#!/usr/bin/env bash
# GPU machine: the cost model's 192-row picks (three math warpgroups) against its best pick without them, on shapes no
# tuning table lists, each pair timed twice in alternation by `hopgemm bench` (L2 flushed, median, cuBLASLt in the same
# run). Output: bench/results/h100-2026-11-22-ab-three-wgs-model.txt.
source bench/probes/ab_lib.sh
ab 2048x3072x7168 block_m=128,block_n=128,cluster_m=2,cluster_n=1,wg_order=1,sfb_regs=1,d_in_stage=0,d_passes=1
ab 4096x1536x7168 block_m=128,block_n=128,cluster_m=2,cluster_n=1,wg_order=1,sfb_regs=1,d_in_stage=0,d_passes=1
ab 6144x512x1536 block_m=256,block_n=128,cluster_m=1,cluster_n=1,wg_order=0,sfb_regs=0,d_in_stage=0,d_passes=1
ab 1536x7168x16384 block_m=256,block_n=128,cluster_m=2,cluster_n=1,wg_order=0,sfb_regs=1,d_in_stage=1,d_passes=2
ab 768x4096x4096 block_m=128,block_n=192,cluster_m=1,cluster_n=1,wg_order=0,sfb_regs=1,d_in_stage=0,d_passes=1
ab 384x16384x16384 block_m=128,block_n=128,cluster_m=2,cluster_n=1,wg_order=0,sfb_regs=1,d_in_stage=1,d_passes=2
ab 3072x576x2048 block_m=128,block_n=128,cluster_m=1,cluster_n=1,wg_order=1,sfb_regs=0,d_in_stage=0,d_passes=1
