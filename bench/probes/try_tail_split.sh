#!/usr/bin/env bash
# Runs on branch wip/tail-split (the tail split is not on main).
# Fifteenth session: the tail split (stream-K for the last round, config tail_split). The GPU tests of the tail split
# and of split-K (the fused reduction was generalised for it), then alternating rounds of the suite rows whose last
# round is partly filled, with tail_split 1-3 against the heuristics' own pick (tail_split 0). (First run, 9120123:
# 8-24% slower everywhere, tail_split=1 too, where no piece is summed: the scheduler's second path through next() had
# moved the mainloop's WGMMA descriptors off the uniform datapath; fixed before this run, SASS checked.)
source bench/probes/try_lib.sh
(cd /tmp && $PYTHON -m pytest -q $HOPGEMM_ROOT/tests/gpu/test_fp8_gemm.py -k "tail_split or split_k" 2>&1 | tail -15)
T="tail_split=1 tail_split=2 tail_split=3"
try_configs --rounds 3 4096x7168x16384,4096x16384x7168,4096x4096x7168,4096x7168x4096 $T
try_configs --rounds 3 4096x2112x7168,4096x7168x2048,4096x2048x7168,4096x24576x1536,4096x512x32768 $T
try_configs --rounds 3 wgrad:2112x7168x4096,wgrad:7168x2112x4096,wgrad:4096x7168x4096 $T
