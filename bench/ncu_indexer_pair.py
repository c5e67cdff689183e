"""One launch of DeepGEMM's and one of hopgemm's fp8_mqa_logits (prefill) on the same inputs, between profiler start
and stop, for Nsight Compute (../shared/anchor/ncu_side_by_side.sh with DRIVER= this file and a kernel filter that
matches both libraries' logits kernels, e.g. `-k regex:mqa_logits`).
Usage: python bench/ncu_indexer_pair.py S_KV H D CP   (S = 2048; CP 1: the context-parallel pattern)"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deep_gemm  # noqa: E402
import hopgemm  # noqa: E402
from vs_deepgemm_indexer import prefill_inputs  # noqa: E402

s_kv, h, d, cp = (int(x) for x in sys.argv[1:5])
args, _ = prefill_inputs(2048, s_kv, h, d, bool(cp))
for _ in range(3):
    deep_gemm.fp8_mqa_logits(*args, clean_logits=True)
    hopgemm.fp8_mqa_logits(*args, clean_logits=True)
torch.cuda.synchronize()
torch.cuda.profiler.start()
deep_gemm.fp8_mqa_logits(*args, clean_logits=True)
torch.cuda.synchronize()
hopgemm.fp8_mqa_logits(*args, clean_logits=True)
torch.cuda.synchronize()
torch.cuda.profiler.stop()
