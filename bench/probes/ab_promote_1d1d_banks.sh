#!/usr/bin/env bash
# Fifteenth session: every 1D1D kernel's promotion FFMA (fin = acc * (sa * sb) + fin) reads acc and fin from one register
# bank (SASS, bench/probes/sass_promotion_banks.py: 72/72 .. 128/128). .device/v_f4 computes fin = (acc * sa) * sb + fin
# instead (one FMUL, one FFMA per element as before): 18-36% fewer bank clashes in the k-loop (ptxas, two-bank model).
scripts/ab_headers.sh .device/v_f4 3 wgrad:2112x7168x4096 wgrad:7168x2048x4096 wgrad:4096x7168x4096 wgrad:576x7168x4096 wgrad:24576x1536x4096 wgrad:7168x2112x8192
