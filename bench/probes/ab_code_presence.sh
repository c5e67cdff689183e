#!/usr/bin/env bash
# Fifteenth session: the tail split's summing code cost 3.5% by its presence alone (notes v24). The same question on
# the plain kernels: .device/v_presence compiles the fused split-K's reduction (4 splits, all at once) into every
# unsplit kernel behind a condition false on every launch (160-280 more instructions, the WGMMA window unchanged in SASS).
scripts/ab_headers.sh .device/v_presence 3 64x7168x16384 128x7168x16384 64x4096x7168 4096x2048x7168 4096x512x32768 4096x7168x4096
