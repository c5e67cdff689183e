"""Repro: python repro_chunks.py M N K key=value... (overrides for the config hook)."""
import sys, torch, hopgemm
sys.path.insert(0, sys.argv[1])
from fp8_gemm_inputs import make_inputs, poisoned, reference
from hopgemm.testing import calc_diff
m, n, k = (int(x) for x in sys.argv[2].split("x"))
ov = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sys.argv[3:]}
w = ov.pop("wgrad", 0) == 1  # 1D1D, FP32 D
a8, sfa, b8, sfb = make_inputs(m, n, k, w, seed=1)
d = poisoned(m, n, torch.float32 if w else torch.bfloat16)
recipe = (1, 1, 128) if w else None
if ov:
    hopgemm._C._fp8_gemm_nt_with_config((a8, sfa), (b8, sfb), d, c=None, recipe=recipe, overrides=ov)
else:
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, recipe=recipe)
torch.cuda.synchronize()
print(sys.argv[2:], "diff", calc_diff(d, reference(a8, sfa, b8, sfb, w)), "nan", d.isnan().any().item())
