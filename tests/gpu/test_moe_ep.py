"""examples/moe_ep.py (the expert-parallel MoE layer: NCCL all-to-all dispatch and combine around the FP8 grouped GEMMs,
forward, backward with K-grouped weight gradients, masked-layout decode under a CUDA graph) launched by torchrun over
every GPU of the machine up to two, checked by the example itself against its single-GPU float32 reference.
On one GPU it runs as one rank (the all-to-alls are copies); on a machine with two it runs expert parallel.

Run: pytest tests/gpu/test_moe_ep.py
"""
import os
import subprocess
import sys

from sm90_torch import require_torch_on_sm90

torch = require_torch_on_sm90("the example's tensors and NCCL")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_moe_ep_example_passes_its_checks():
    ranks = min(2, torch.cuda.device_count())
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={ranks}",
           os.path.join(ROOT, "examples", "moe_ep.py"), "--iters", "3"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    print(run.stdout)
    assert run.returncode == 0 and "moe_ep: all checks passed" in run.stdout, run.stdout[-4000:] + run.stderr[-4000:]
