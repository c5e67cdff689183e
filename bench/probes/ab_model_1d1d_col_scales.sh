#!/usr/bin/env bash
# GPU machine: the cost model with the 1D1D column-scale term (k1D1DColScalesInSmemEfficiency) against its
# picks without it, on 1D1D shapes whose pick the term moves (a sample of the 719 of 3060 1D1D grid picks), each
# pair timed twice in alternation by `hopgemm bench` (L2 flushed, median, cuBLASLt in the same run).
# Output: bench/results/h100-2026-11-22-ab-model-1d1d-col-scales.txt.
source bench/probes/ab_lib.sh
ab wgrad:3072x16384x5120 block_m=256,block_n=128,cluster_m=1,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=1
ab wgrad:4096x4096x13824 block_m=256,block_n=128,cluster_m=1,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=1,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=4
ab wgrad:6144x2112x8192 block_m=256,block_n=96,cluster_m=2,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=1,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=1
ab wgrad:1280x6144x7168 block_m=256,block_n=120,cluster_m=1,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=1
ab wgrad:8192x13824x8192 block_m=256,block_n=96,cluster_m=2,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=1,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=1
ab wgrad:2048x24576x2048 block_m=256,block_n=128,cluster_m=1,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=1
ab wgrad:640x6144x4096 block_m=128,block_n=128,cluster_m=1,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=1,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=1
ab wgrad:200x32768x13824 block_m=256,block_n=128,cluster_m=1,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=1,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=4
ab wgrad:16384x576x16384 block_m=256,block_n=96,cluster_m=2,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=1,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=1
