#!/usr/bin/env bash
# GPU machine: the cost model with the per-SM L2 ingress term (and the L2 rates refitted) against its
# picks without it, on grid shapes whose pick it moves (a random sample of the 2444 of 6120), each
# pair timed twice in alternation by `hopgemm bench` (L2 flushed, median, cuBLASLt in the same run).
# Output: bench/results/h100-2026-11-22-ab-model-sm-ingress.txt.
source bench/probes/ab_lib.sh
ab 8192x1536x7168 block_m=256,block_n=128,cluster_m=2,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=1
ab 8192x7168x7168 block_m=256,block_n=128,cluster_m=2,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=1
ab 8192x1536x4096 block_m=256,block_n=128,cluster_m=2,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=1
ab 16384x24576x8192 block_m=256,block_n=128,cluster_m=1,cluster_n=2,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=1,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=2
ab 768x12288x7168 block_m=128,block_n=192,cluster_m=2,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=1
ab 768x6144x7168 block_m=128,block_n=96,cluster_m=1,cluster_n=2,k_splits=1,raster_band=16,promote_overlap=0,wg_order=1,d_in_stage=0,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=1
ab 16384x32768x8192 block_m=256,block_n=128,cluster_m=1,cluster_n=2,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=1,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=2
ab wgrad:4096x3072x512 block_m=128,block_n=80,cluster_m=1,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=1,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=1
ab wgrad:16384x512x5120 block_m=256,block_n=128,cluster_m=1,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=1
ab wgrad:8192x13824x13824 block_m=256,block_n=104,cluster_m=1,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=1
ab wgrad:512x16384x5120 block_m=256,block_n=128,cluster_m=1,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=0,sf_chunks=0,d_passes=1
ab 4095x7176x7296 block_m=256,block_n=128,cluster_m=2,cluster_n=1,k_splits=1,raster_band=16,promote_overlap=0,wg_order=0,d_in_stage=0,splitk_fused=0,sfb_regs=1,sf_chunks=0,d_passes=1
