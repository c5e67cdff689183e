"""Soak (issue 29 item 6): mixed ops with random shapes on several streams at once, and CUDA graphs captured and
replayed, for a given time; every result checked against the float64 reference; device memory, host RSS and open file
descriptors sampled and checked for growth.

The problems are fuzz_ops.py's (every family: dense nt / nn / tn / tt in both recipes, M-grouped ids / psum / packed,
masked, K-grouped, the indexer's prefill and paged decode), drawn from a pool of POOL shapes per family with fresh input
data each time: the kernels the pool needs are all loaded during the warm-up, after which nothing may grow. Each of
--streams threads runs problems on a torch stream of its own (the ops run on the current stream); one more thread
captures CUDA graphs of dense GEMMs (split-K-sized included) and replays each several times on fresh inputs copied into
its static tensors.

Growth check: a sample every --sample-s seconds (torch's caching allocator emptied first, so the device figure is
what is live: torch's blocks, hopgemm's workspaces and loaded modules). The baseline is the largest sample of the
warm-up (the first third of the run, at least one pass over the pool); every later sample must stay within it plus
DEVICE_SLACK_MIB, RSS_SLACK_MIB and FD_SLACK.

Usage: python tests/gpu/soak.py [--seconds 120] [--streams 3] [--seed 29] [--json OUT.json]
Exit status 1 on a wrong result, an error, or growth.
"""
import argparse
import json
import os
import random
import sys
import threading
import time

import torch

import hopgemm
from fp8_gemm_inputs import check, make_inputs, poisoned
from fuzz_ops import FAMILIES, run_problem

POOL = 16  # shapes per family: fuzz_ops.py's first problems of the seed (the fuzzer compiled their kernels)
GRAPH_SHAPES = [(128, 2112, 7168, False), (64, 768, 4096, True), (257, 1536, 1024, False), (33, 4096, 512, True)]
GRAPH_REPLAYS = 4
DEVICE_SLACK_MIB, RSS_SLACK_MIB, FD_SLACK = 64, 64, 8


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def sample():
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    free, total = torch.cuda.mem_get_info()
    return {"t": time.time(), "device_used_mib": (total - free) / 2**20,
            "torch_allocated_mib": torch.cuda.memory_allocated() / 2**20, "rss_mib": rss_mib(),
            "fds": len(os.listdir("/proc/self/fd"))}


class Soak:
    def __init__(self, seed, deadline):
        self.seed, self.deadline = seed, deadline
        self.lock = threading.Lock()
        self.counts, self.failures = {}, []

    def count(self, what):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1

    def fail(self, what, e):
        with self.lock:
            self.failures.append(f"{what}: {type(e).__name__}: {str(e)[:500]}")

    def problems(self, index):
        """Thread `index`: random problems of the pool on a stream of its own until the deadline."""
        r = random.Random(f"{self.seed}:soak:{index}")
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            while time.time() < self.deadline and not self.failures:
                family = r.choice(FAMILIES)
                name = f"{family}:{r.randrange(POOL)}"
                try:
                    run_problem(self.seed, name, data_seed=r.randrange(1 << 30))
                    self.count(family)
                except Exception as e:  # noqa: BLE001: every failure is reported with its problem
                    self.fail(f"stream {index} {name} (fuzz seed {self.seed})", e)

    def graphs(self):
        """Dense GEMMs captured in CUDA graphs (warmed eagerly first), each replayed on fresh inputs and checked."""
        r = random.Random(f"{self.seed}:soak:graphs")
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            while time.time() < self.deadline and not self.failures:
                m, n, k, recipe_1d1d = r.choice(GRAPH_SHAPES)
                recipe = (1, 1, 128) if recipe_1d1d else (1, 128, 128)
                dtype = torch.float32 if recipe_1d1d else torch.bfloat16
                try:
                    static = make_inputs(m, n, k, recipe_1d1d, seed=r.randrange(1 << 30))
                    d = poisoned(m, n, dtype)
                    a8, sfa, b8, sfb = static
                    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, recipe=recipe)  # loads the kernel before capture
                    graph = torch.cuda.CUDAGraph()
                    # thread_local: the other threads' eager calls and the sampler's synchronize go on meanwhile.
                    with torch.cuda.graph(graph, stream=stream, capture_error_mode="thread_local"):
                        hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, recipe=recipe)
                    for _ in range(GRAPH_REPLAYS):
                        fresh = make_inputs(m, n, k, recipe_1d1d, seed=r.randrange(1 << 30))
                        for dst, src in zip(static, fresh):
                            dst.copy_(src)
                        d.fill_(float("nan"))
                        graph.replay()
                        check(d, *static, recipe_1d1d)
                    del graph
                    self.count("graph_replays")
                except Exception as e:  # noqa: BLE001
                    self.fail(f"graph {m}x{n}x{k} recipe {recipe}", e)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--streams", type=int, default=3)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--sample-s", type=float, default=0)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    sample_s = args.sample_s or max(2.0, args.seconds / 40)
    t0 = time.time()
    # The warm-up: one pass over every shape of the pool on one stream loads every kernel the soak needs.
    soak = Soak(args.seed, float("inf"))
    for family in FAMILIES:
        for i in range(POOL):
            try:
                run_problem(args.seed, f"{family}:{i}")
            except Exception as e:  # noqa: BLE001
                soak.fail(f"warm-up {family}:{i}", e)
    warm_s = time.time() - t0
    print(f"soak: warm-up over {len(FAMILIES)} x {POOL} shapes in {warm_s:.0f} s", flush=True)
    soak.deadline = time.time() + args.seconds
    threads = [threading.Thread(target=soak.problems, args=(i,)) for i in range(args.streams)]
    threads.append(threading.Thread(target=soak.graphs))
    for t in threads:
        t.start()
    samples = []
    start = time.time()
    while any(t.is_alive() for t in threads):
        time.sleep(min(sample_s, max(0.1, soak.deadline - time.time() + 0.1)))
        samples.append(sample())
    for t in threads:
        t.join()
    samples.append(sample())
    # The baseline: the largest sample of the first third of the soak (after the warm-up pass).
    first_third = [s for s in samples if s["t"] - start <= args.seconds / 3] or samples[:1]
    later = [s for s in samples if s["t"] - start > args.seconds / 3]
    base = {key: max(s[key] for s in first_third) for key in ("device_used_mib", "rss_mib", "fds")}
    peak = {key: max((s[key] for s in later), default=base[key]) for key in base}
    slack = {"device_used_mib": DEVICE_SLACK_MIB, "rss_mib": RSS_SLACK_MIB, "fds": FD_SLACK}
    growth = {key: peak[key] - base[key] for key in base}
    grew = [f"{key} grew {growth[key]:.1f} (baseline {base[key]:.1f}, later peak {peak[key]:.1f}, slack {slack[key]})"
            for key in base if growth[key] > slack[key]]
    report = {"seconds": args.seconds, "warm_up_s": round(warm_s, 1), "streams": args.streams, "seed": args.seed,
              "counts": soak.counts, "problems": sum(v for k, v in soak.counts.items() if k != "graph_replays"),
              "failures": soak.failures, "baseline": base, "later_peak": peak, "growth": growth, "grew": grew,
              "samples": samples}
    print(f"soak: {args.seconds:.0f} s on {args.streams} streams + graphs: {report['problems']} problems, "
          f"{soak.counts.get('graph_replays', 0)} graphs x {GRAPH_REPLAYS} replays, {len(soak.failures)} failures; "
          f"growth after the first third: device {growth['device_used_mib']:+.1f} MiB, RSS {growth['rss_mib']:+.1f} MiB, "
          f"fds {growth['fds']:+d} ({len(samples)} samples)")
    for line in soak.failures[:10] + grew:
        print(f"  FAIL {line}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 1 if soak.failures or grew else 0


if __name__ == "__main__":
    sys.exit(main())
