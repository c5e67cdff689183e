"""A small subset of the DeepSeek-V3.2 indexer's kernels, for compute-sanitizer (memcheck, racecheck, synccheck):
prefill with ragged ranges (empty and length-1 ones, ranges past both ends), the compressed form and BF16 logits;
the paged decode with ragged context lengths (0, 1, across segment boundaries), -1 blocks, next_n 1 and 2, 1-D and
2-D context lengths, more segments than CTAs; the schedule's metadata kernel. Each case is checked against the float64
reference (tests/gpu/mqa_logits_inputs.py), so a case that computes wrong fails here even when the sanitizer is quiet.

Run through tests/gpu/sanitize.sh; on its own it just runs the cases once and checks the results.
"""
import torch

from hopgemm.testing import calc_diff

import mqa_logits_inputs as inputs  # same directory: the GPU tests' inputs, references and checks
from mqa_logits_inputs import (check_paged, check_prefill, make_paged, make_prefill, ranges_causal, ranges_ragged,
                               ref_prefill, run_paged, run_prefill, tol)


def prefill_cases():
    # heads 64 (four query tokens per unit: two 128-row Q chunks), 32 (four, one chunk) and 128 (two, two chunks), with
    # ranges running past both ends of the KV sequence.
    for s, s_kv, h, d, ranges, dtype in [(33, 600, 64, 128, ranges_ragged, torch.float32),
                                         (19, 300, 32, 64, ranges_ragged, torch.bfloat16),
                                         (8, 257, 128, 32, ranges_causal, torch.float32)]:
        q_bf, kv_bf, q, kv, sf, w = make_prefill(s, s_kv, h, d, seed=s)
        check_prefill(q_bf, kv_bf, q, kv, sf, w, *ranges(s, s_kv), dtype)
    # The compressed form: row i holds KV tokens [ks[i], ke[i]) from column 0, the rest untouched.
    s, s_kv, max_k = 24, 900, 300
    q_bf, kv_bf, q, kv, sf, w = make_prefill(s, s_kv, 64, 128, seed=4)
    ks = torch.arange(s, dtype=torch.int32, device=inputs.DEVICE) * 25
    ke = ks + torch.arange(s, dtype=torch.int32, device=inputs.DEVICE) * 13 % (max_k + 1)
    _, out = run_prefill(q, kv, sf, w, ks, ke, False, max_k, torch.float32)
    simulated = ref_prefill(q.double(), kv.double() * sf.double()[:, None], w)
    for i in range(s):
        n = int(ke[i] - ks[i])
        assert torch.isnan(out[i, n:]).all(), f"compressed row {i}: a column past its range was written"
        assert n == 0 or calc_diff(out[i, :n].double(), simulated[i, int(ks[i]):int(ke[i])]) < tol(False)


def paged_cases():
    # (batch, next_n, heads, head dim, average context, 2-D lengths, -1 blocks, logits dtype, clean_logits)
    for batch, next_n, h, d, avg, lens_2d, holes, dtype, clean in [
            (6, 1, 64, 128, 700, False, True, torch.float32, True),
            (5, 2, 32, 64, 400, True, False, torch.bfloat16, True),
            (5, 2, 64, 128, 600, False, True, torch.float32, False)]:
        c = make_paged(batch, next_n, h, d, avg, lens_2d, seed=batch + next_n, holes=holes)
        check_paged(c, next_n, clean, dtype)
    # Fewer CTAs than segments: each CTA walks a run across requests (meta rows from the metadata kernel).
    c = make_paged(7, 2, 64, 128, 900, lens_2d=True, seed=21, holes=True)
    _, small, meta = run_paged(c, 2, True, num_sms=3)
    assert meta.shape == (4, 2) and meta[-1].tolist() == [7, 0]
    _, full, _ = run_paged(c, 2, True)
    assert torch.equal(small.view(torch.int32), full.view(torch.int32)), "the schedule changed the logits"


def main():
    prefill_cases()
    paged_cases()
    torch.cuda.synchronize()
    print("sanitizer subset ran")


if __name__ == "__main__":
    main()
