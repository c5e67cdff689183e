#!/usr/bin/env bash
# Fifteenth session: the consumer's role code first in the source, the producer's second (.device/v_flip), which puts
# the producer's loop first in SASS, right before the consumer's. The tail split's reduction code, placed between the
# two loops, cost 3.5% with an identical mainloop (ab-fused-verdict-and-tail-code.txt): is it the distance between the
# two hot loops (instruction cache)? Fused split-K decode kernels: 740 -> 274 instructions apart; 256x128: ~400 both.
scripts/ab_headers.sh .device/v_flip 3 64x2112x7168 128x576x7168 1x7168x16384 4096x2048x7168 4096x512x32768 4096x7168x4096 wgrad:7168x2112x4096
