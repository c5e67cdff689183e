"""Seeded random-problem fuzzer of every op family on the GPU (issue 29 item 4): N random valid problems per family,
each run by the op as a caller runs it (the heuristics pick the kernel) into a NaN-poisoned output and checked against
the float64 reference of the dequantised inputs with the suites' element-wise bound and calc_diff bars
(tests/gpu/fp8_gemm_inputs.py, grouped_inputs.py, mqa_logits_inputs.py).

Families: dense fp8_gemm nt / nn / tn / tt in both recipes (1D2D BF16 out; 1D1D BF16 or FP32 out, FP32 with C
accumulated, aliased or distinct; a third of the problems split-K-sized: small M and N, long K); the M-grouped
contiguous GEMM with group ids, psum and packed layouts (row-major or MN-major sfa); masked; K-grouped (C aliased,
distinct or absent, empty groups); the indexer's fp8_mqa_logits (ragged or causal ranges) and paged mqa_logits
(holes, next_n 1 / 2, 1-D / 2-D lengths, clean or not).

Problem i of family F under seed S is drawn from random.Random(f"{S}:{F}:{i}") alone: any failure reproduces with
  python tests/gpu/fuzz_ops.py --seed S --only F:i
Each problem runs in a worker process (tests/gpu/case_worker.py) under a timeout, so a fault or a hang fails that problem
alone; --jobs workers run side by side, compiling the kernels they meet through the JIT's disk cache (a kernel is
compiled by one process, the others wait for it and load it).

Usage: python tests/gpu/fuzz_ops.py [--per-family N] [--seed S] [--jobs J] [--families F,...] [--json OUT.json]
       [--only F:i,...] [--budget-s SECONDS]
The problems run in rounds of 100 per family; with --budget-s no round starts after that time (the report counts the
problems run).
Exit status 1 if any problem failed. The JSON holds per family: problems, passed, failures {case: why, repro}.
"""
import argparse
import json
import os
import random
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILIES = ["dense_nt", "dense_nn", "dense_tn", "dense_tt", "m_grouped_ids", "m_grouped_psum", "m_grouped_packed",
            "m_grouped_masked", "k_grouped", "mqa_logits", "paged_mqa_logits"]


def rng_of(seed, name):
    """The random source of problem `name` ("family:index") under `seed`: nothing else feeds it."""
    return random.Random(f"{seed}:{name}")


# ---- problems: plain dicts of sizes, drawn from the case's own random source ---------------------------------------

def dense_problem(r, form):
    recipe_1d1d = r.random() < 0.5
    if r.random() < 1 / 3:  # split-K-sized: few output tiles, many k-blocks
        m, n, k = r.randint(1, 192), 8 * r.randint(1, 32), 16 * r.randint(64, 512)
    else:
        m, n, k = r.randint(1, 640), 8 * r.randint(1, 96), 16 * r.randint(1, 160)
    fp32_out = recipe_1d1d and r.random() < 0.6
    c_mode = r.choice(["none", "aliased", "distinct"]) if fp32_out else "none"
    return dict(form=form, m=m, n=n, k=k, recipe_1d1d=recipe_1d1d, fp32_out=fp32_out, c_mode=c_mode)


def group_sizes(r, groups, most):
    return [0 if r.random() < 0.15 else r.randint(1, most) for _ in range(groups)]


def m_grouped_problem(r, kind):
    groups = r.randint(1, 12)
    return dict(kind=kind, sizes=group_sizes(r, groups, 300), n=8 * r.randint(1, 80), k=16 * r.randint(8, 96),
                sfa_mn_major=r.random() < 0.5, trailing_rows=r.choice([0, 0, 5, 64]))


def masked_problem(r):
    groups, max_m = r.randint(1, 10), r.choice([64, 128, 192, 256, 384])
    masked_m = [r.randint(0, max_m) if r.random() < 0.85 else 0 for _ in range(groups)]
    return dict(masked_m=masked_m, max_m=max_m, n=8 * r.randint(1, 80), k=16 * r.randint(8, 96),
                expected_m=r.randint(1, max_m), sf_mn_major=r.random() < 0.5)


def k_grouped_problem(r):
    ks = [128 * (0 if r.random() < 0.15 else r.randint(1, 6)) for _ in range(r.randint(1, 12))]
    # "mn": the scales as deep_gemm passes them (sf.T), TMA-aligned only where M % 4 == 0; "aligned": any M.
    sf_layout, m = r.choice(["mn", "aligned"]), r.randint(1, 300)
    return dict(m=4 * -(-m // 4) if sf_layout == "mn" else m, n=4 * r.randint(1, 100), ks=ks,
                c_mode=r.choice(["aliased", "distinct", "none"]), sf_layout=sf_layout)


def mqa_problem(r):
    h, d = r.choice([(64, 128), (32, 64), (128, 32), (32, 128)])
    s = r.randint(1, 48)
    return dict(s=s, s_kv=r.randint(s, 1200), h=h, d=d, ranges=r.choice(["ragged", "causal"]),
                bf16=r.random() < 0.5)


def paged_problem(r):
    h, d = r.choice([(64, 128), (32, 64), (32, 128)])
    return dict(batch=r.randint(1, 8), next_n=r.choice([1, 2]), h=h, d=d, avg=r.randint(16, 1200),
                lens_2d=r.random() < 0.5, holes=r.random() < 0.5, bf16=r.random() < 0.3, clean=r.random() < 0.7)


def problem(seed, name):
    family, _, _ = name.partition(":")
    r = rng_of(seed, name)
    if family.startswith("dense_"):
        return dense_problem(r, family[len("dense_"):])
    if family in ("m_grouped_ids", "m_grouped_psum", "m_grouped_packed"):
        return m_grouped_problem(r, family[len("m_grouped_"):])
    return {"m_grouped_masked": masked_problem, "k_grouped": k_grouped_problem, "mqa_logits": mqa_problem,
            "paged_mqa_logits": paged_problem}[family](r)


# ---- running one problem (worker side: imports torch and hopgemm) --------------------------------------------------

def run_dense(p, data_seed):
    import torch

    import hopgemm
    from fp8_gemm_inputs import check, make_inputs, poisoned

    m, n, k = p["m"], p["n"], p["k"]
    a8, sfa, b8, sfb = make_inputs(m, n, k, p["recipe_1d1d"], seed=data_seed)
    dtype = torch.float32 if p["fp32_out"] else torch.bfloat16
    recipe = (1, 1, 128) if p["recipe_1d1d"] else (1, 128, 128)
    # DeepGEMM's forms: n / t describe A against [M, K] and B against [K, N]; the operands are views of the same data.
    a_arg = (a8.T, sfa.T) if p["form"] in ("tn", "tt") else (a8, sfa)
    b_arg = (b8.T, sfb.T) if p["form"] in ("nn", "tn") else (b8, sfb)
    op = getattr(hopgemm, f"fp8_gemm_{p['form']}")
    c = None
    if p["c_mode"] == "none":
        d = poisoned(m, n, dtype)
        op(a_arg, b_arg, d, recipe=recipe)
    else:
        gen = torch.Generator(device="cuda").manual_seed(data_seed + 1)
        c = torch.randn(m, n, device="cuda", generator=gen) * 32
        if p["c_mode"] == "aliased":
            d = c.clone()
            op(a_arg, b_arg, d, c=d, recipe=recipe)
        else:
            d, c_before = poisoned(m, n, dtype), c.clone()
            op(a_arg, b_arg, d, c=c, recipe=recipe)
            assert torch.equal(c, c_before), "c must not be modified"
    check(d, a8, sfa, b8, sfb, p["recipe_1d1d"], c=c)


def run_m_grouped(p, data_seed):
    from grouped_inputs import run_contiguous
    from hopgemm.testing import m_grouped_ids_layout, m_grouped_packed_layout, m_grouped_psum_layout

    sizes = p["sizes"]
    if p["kind"] == "ids":
        layout = m_grouped_ids_layout(sizes)
    elif p["kind"] == "psum":
        layout = m_grouped_psum_layout(sizes, trailing_rows=p["trailing_rows"])
    else:
        layout = m_grouped_packed_layout(sizes, trailing_rows=p["trailing_rows"])
    if layout.num_rows == 0:
        return  # every group empty and no trailing rows: no tensor to build
    run_contiguous(layout, p["n"], p["k"], data_seed, sfa_mn_major=p["sfa_mn_major"])


def run_masked_problem(p, data_seed):
    from grouped_inputs import run_masked

    run_masked(p["masked_m"], p["max_m"], p["n"], p["k"], p["expected_m"], data_seed, guard_rows=16,
               sf_mn_major=p["sf_mn_major"])


def run_k_grouped_problem(p, data_seed):
    from grouped_inputs import run_k_grouped

    run_k_grouped(p["m"], p["n"], p["ks"], data_seed, c_mode=p["c_mode"], sf_layout=p["sf_layout"])


def run_mqa(p, data_seed):
    import torch

    from mqa_logits_inputs import check_prefill, make_prefill, ranges_causal, ranges_ragged

    q_bf, kv_bf, q, kv, sf, w = make_prefill(p["s"], p["s_kv"], p["h"], p["d"], seed=data_seed)
    ranges = ranges_ragged(p["s"], p["s_kv"], seed=data_seed) if p["ranges"] == "ragged" else \
        ranges_causal(p["s"], p["s_kv"])
    check_prefill(q_bf, kv_bf, q, kv, sf, w, *ranges, torch.bfloat16 if p["bf16"] else torch.float32)


def run_paged(p, data_seed):
    import torch

    from mqa_logits_inputs import check_paged, make_paged

    c = make_paged(p["batch"], p["next_n"], p["h"], p["d"], p["avg"], p["lens_2d"], seed=data_seed, holes=p["holes"])
    check_paged(c, p["next_n"], p["clean"], torch.bfloat16 if p["bf16"] else torch.float32)


def run_problem(seed, name, data_seed=None):
    """Problem `name` under `seed` run and checked; its inputs drawn from data_seed (default: the problem's own)."""
    p = problem(seed, name)
    if data_seed is None:
        data_seed = rng_of(seed, name + ":data").randrange(1 << 30)
    family = name.partition(":")[0]
    if family.startswith("dense_"):
        run_dense(p, data_seed)
    elif family == "m_grouped_masked":
        run_masked_problem(p, data_seed)
    elif family.startswith("m_grouped_"):
        run_m_grouped(p, data_seed)
    elif family == "k_grouped":
        run_k_grouped_problem(p, data_seed)
    elif family == "mqa_logits":
        run_mqa(p, data_seed)
    else:
        run_paged(p, data_seed)


def worker(seed, names):
    from case_worker import serve

    serve({name: (lambda n=name: run_problem(seed, n)) for name in names}, names,
          label=lambda name: f"tests/gpu/fuzz_ops.py::{name}")


# ---- the parent: split the cases over workers, collect, report -----------------------------------------------------

ROUND = 100  # problems per family a round runs (the budget is checked between rounds)


def run_all(seed, names, jobs):
    from case_worker import run_cases

    results, lock = {}, threading.Lock()
    # Interleaved: each worker gets every family, so the kernels each family needs are compiled by several at once.
    chunks = [names[i::jobs] for i in range(jobs)]

    def run_chunk(chunk):
        out = run_cases([sys.executable, os.path.abspath(__file__), "--worker", str(seed)], chunk, cwd=HERE)
        with lock:
            results.update(out)

    threads = [threading.Thread(target=run_chunk, args=(c,)) for c in chunks if c]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-family", type=int, default=500)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--only", default="", help="cases F:i,... to rerun")
    parser.add_argument("--json", default="")
    parser.add_argument("--budget-s", type=float, default=0,
                        help="start no further round of problems (ROUND per family) after this many seconds")
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.worker is not None:
        return worker(args.worker, rest)
    families = [f for f in args.families.split(",") if f]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown families {unknown}; known: {FAMILIES}")
    if args.only:
        names = [n for n in args.only.split(",") if n]
    else:
        names = [f"{f}:{i}" for i in range(args.per_family) for f in families]
    t0 = time.time()
    results, rounds = {}, [names[i:i + ROUND * len(families)] for i in range(0, len(names), ROUND * len(families))]
    for i, batch in enumerate(rounds):
        if args.budget_s and i > 0 and time.time() - t0 > args.budget_s:
            print(f"fuzz: budget of {args.budget_s:.0f} s spent after {i} of {len(rounds)} rounds")
            names = [n for n in names if n in results]
            break
        results.update(run_all(args.seed, batch, max(1, args.jobs)))
    seconds = time.time() - t0
    report = {"seed": args.seed, "per_family": args.per_family, "jobs": args.jobs, "seconds": round(seconds, 1),
              "families": {}}
    for name in names:
        family = name.partition(":")[0]
        entry = report["families"].setdefault(family, {"problems": 0, "passed": 0, "failures": {}})
        entry["problems"] += 1
        why = results.get(name, "not run")
        if why == "ok":
            entry["passed"] += 1
        else:
            entry["failures"][name] = {"why": why[:1500], "problem": problem(args.seed, name),
                                       "repro": f"python tests/gpu/fuzz_ops.py --seed {args.seed} --only {name}"}
    failed = 0
    for family, entry in report["families"].items():
        failed += len(entry["failures"])
        print(f"fuzz {family}: {entry['passed']} / {entry['problems']} passed")
        for name, failure in list(entry["failures"].items())[:5]:
            print(f"  FAIL {name} (seed {args.seed}): {failure['why'][:300]}\n    problem {failure['problem']}\n"
                  f"    repro: {failure['repro']}")
    print(f"fuzz: {len(names) - failed} / {len(names)} problems passed in {seconds:.0f} s ({args.jobs} workers, "
          f"seed {args.seed})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
