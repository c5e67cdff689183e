#!/usr/bin/env bash
# GPU machine: the cost model with phantom tiles counted (a cluster's odd tile runs on an SM too) against its
# picks without them, on shapes whose pick the change moves (a sample of the 242 of 6120 grid picks), each
# pair timed twice in alternation by `hopgemm bench` (L2 flushed, median, cuBLASLt in the same run).
# Output: bench/results/h100-2026-11-22-ab-model-phantom-tiles.txt.
source bench/probes/ab_lib.sh
ab 384x16384x16384 block_m=128,block_n=128,cluster_m=2,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=1,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=2
ab 640x8192x5120 block_m=128,block_n=128,cluster_m=2,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=1,d_in_stage=0,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=1
ab 384x24576x8192 block_m=128,block_n=192,cluster_m=2,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=1
ab 2048x2112x5120 block_m=256,block_n=64,cluster_m=1,cluster_n=2,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=1
ab 2560x16384x7168 block_m=256,block_n=96,cluster_m=1,cluster_n=2,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=1
ab 768x32768x8192 block_m=256,block_n=128,cluster_m=2,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=1,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=2
ab 640x13824x16384 block_m=128,block_n=192,cluster_m=2,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=1
ab wgrad:3072x16384x5120 block_m=256,block_n=88,cluster_m=1,cluster_n=2,k_splits=1,raster_band=16,promote_overlap=1,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=1
ab wgrad:4096x13824x13824 block_m=256,block_n=80,cluster_m=1,cluster_n=2,k_splits=1,raster_band=16,promote_overlap=1,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=1
ab wgrad:2048x2112x16384 block_m=256,block_n=64,cluster_m=1,cluster_n=2,k_splits=1,raster_band=16,promote_overlap=1,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=1
ab wgrad:640x8192x16384 block_m=128,block_n=104,cluster_m=1,cluster_n=2,k_splits=1,raster_band=16,promote_overlap=1,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=1
ab 4095x7176x7296 block_m=256,block_n=128,cluster_m=1,cluster_n=2,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=1
