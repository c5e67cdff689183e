"""Time explicit FP8 GEMM configurations for one or more shapes (GPU machine), next to the heuristics' own choice.

    python bench/try_configs.py 4096x512x32768 "block_m=256,block_n=128,k_splits=2" "block_m=128,block_n=128"
    python bench/try_configs.py wgrad:7168x2112x4096 "promote_overlap=1"
    python bench/try_configs.py --rounds 5 wgrad:7168x2112x4096,wgrad:4096x7168x4096 "split_n=1"
    python bench/try_configs.py --sfa row --rounds 3 wgrad:16384x7168x4096 "cluster_n=2"

Each config is a comma-separated list of Sm90Fp8GemmConfig fields (the rest: the heuristics' choice, stages
refilled for the tile). L2 flushed before every call, median of 30 (hopgemm.testing.bench); the result is
checked against the heuristics' output. A `wgrad:` shape is the 1D1D weight-gradient problem as `hopgemm bench`
times it: A and B scaled per 1x128 (both scale tensors MN-major, TMA-aligned), FP32 D += A B^T (C aliased to D).
--sfa row: the per-row scales row-major as the quantiser returns them (`hopgemm bench --sfa row`): A's, and B's
for a wgrad: shape.

--rounds N (N > 1): the heuristics' config and every given config are timed in N rounds, in alternating order,
and each config is reported as the median over rounds of its time relative to the heuristics' in the same round:
an A/B that the GPU's drift under load (clocks fall 3-20% after seconds of back-to-back calls) does not bias.
"""
import statistics
import sys

import torch

import hopgemm
from hopgemm.testing import bench, calc_diff
from hopgemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8


def parse_spec(spec):
    return {kv.split("=")[0]: int(kv.split("=")[1]) for kv in spec.split(",")}


def try_shape(shape, specs, rounds, row_major_scales=False):
    wgrad = shape.startswith("wgrad:")
    m, n, k = (int(x) for x in shape.removeprefix("wgrad:").split("x"))
    a8, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda", dtype=torch.bfloat16))
    if wgrad:
        b8, sfb = per_token_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16))
        if not row_major_scales:
            sfb = hopgemm.get_mn_major_tma_aligned_tensor(sfb)
        c0 = torch.randn(m, n, device="cuda", dtype=torch.float32)
    else:
        b8, sfb = per_block_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16))
    if not row_major_scales:
        sfa = hopgemm.get_mn_major_tma_aligned_tensor(sfa)

    def run(d, overrides=None):
        # D += A B^T accumulates on every call: the result is checked on a fresh copy of C, timing reuses it.
        c = d if wgrad else None
        if overrides is None:
            hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, c=c)
        else:
            hopgemm._C._fp8_gemm_nt_with_config((a8, sfa), (b8, sfb), d, c, overrides=overrides)

    fresh = (lambda: c0.clone()) if wgrad else (lambda: torch.empty(m, n, device="cuda", dtype=torch.bfloat16))
    tflops = lambda t: 2 * m * n * k / t * 1e-12  # noqa: E731
    ref = fresh()
    run(ref)
    # The configs that run, each with its output buffer (None: the heuristics' choice).
    candidates = [("heuristics", None, fresh())]
    for spec in specs:
        overrides = parse_spec(spec)
        d = fresh()
        try:
            run(d, overrides)
        except Exception as e:  # an invalid config is reported, not fatal
            print(f"{shape}  {spec}: {e}")
            continue
        candidates.append((spec, overrides, d))
        diff = calc_diff(d, ref)
        if diff > 1e-3:
            print(f"{shape}  {spec}: WRONG RESULT, diff {diff:.1e} against the heuristics' output")
    times = {name: [] for name, _, _ in candidates}
    for r in range(rounds):
        order = candidates if r % 2 == 0 else candidates[::-1]
        for name, overrides, d in order:
            times[name].append(bench(lambda: run(d, overrides), num_tests=30))  # noqa: B023
    base = times["heuristics"]
    print(f"{shape} heuristics: {statistics.median(base) * 1e6:8.1f} us  {tflops(statistics.median(base)):6.0f} TFLOPS")
    for name, _, _ in candidates[1:]:
        t = statistics.median(times[name])
        line = f"  {name:60s} {t * 1e6:8.1f} us  {tflops(t):6.0f} TFLOPS"
        if rounds > 1:
            rel = [x / b for x, b in zip(times[name], base)]
            line += f"  vs heuristics {statistics.median(rel):.3f} (rounds {' '.join(f'{x:.3f}' for x in rel)})"
        print(line, flush=True)


def main():
    args = sys.argv[1:]
    rounds, row_major_scales = 1, False
    while args and args[0] in ("--rounds", "--sfa"):
        if args[0] == "--rounds":
            rounds = int(args[1])
        elif args[1] in ("row", "mn"):
            row_major_scales = args[1] == "row"
        else:
            sys.exit(f"--sfa must be 'row' or 'mn', got '{args[1]}'")
        args = args[2:]
    for shape in args[0].split(","):
        try_shape(shape, args[1:], rounds, row_major_scales)


if __name__ == "__main__":
    main()
