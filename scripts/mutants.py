#!/usr/bin/env python3
"""Mutation check of the GPU tests: builds deliberately broken copies of the device headers (include/hopgemm/device)
and reports which tests catch each. Every mutant must be caught by at least one test, and the same tests must pass on
the unbroken headers (the control), else the run fails.

Each mutant is one textual change of one header, the kind of bug a refactoring of the schedulers or the producer could
bring: a scale from the wrong K block, a B-sharing pair computing its peer's group, a group row range one row too long,
a dropped K block, an A-sharing pair loading its partner's half. A mutant runs in its own pytest process with
HOPGEMM_INCLUDE_DIR pointing at its copy (the JIT hashes the header tree, so every kernel is compiled from it) and a
cache of its own; all of them and the control run at once.

The tests: the kernel-variant probe (tests/gpu/kernel_variants.py mutant_probe: one kernel of each op, recipe, output
type, pairing, split-K and A-scale layout, each forced on its small problem and checked element by element against the
float64 reference) and the hostile-device-data cases (tests/gpu/test_hostile_device_data.py).

Usage (on the GPU machine, hopgemm installed): python scripts/mutants.py [--out DIR] [--only NAME ...] [--list]
Writes DIR/mutants.json (default: $HOPGEMM_RELIABILITY_DIR, else nothing) and prints a table.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DEVICE = os.path.join(ROOT, "include", "hopgemm", "device")
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))

# name: (header under include/hopgemm/device, text, replacement, what the bug is). The text must occur exactly once.
MUTANTS = {
    "wrong_scale_block": (
        "scheduler/sm90_dense_scheduler.cuh",
        "HOPGEMM_DEVICE i32 sf_k_block(const WorkUnit&, i32 kb) const { return kb; }",
        "HOPGEMM_DEVICE i32 sf_k_block(const WorkUnit&, i32 kb) const { return kb > 0 ? kb - 1 : 0; }",
        "k-block kb promoted with the scales of k-block kb - 1 (dense and group-ids layouts)"),
    "wrong_group_id": (
        "scheduler/sm90_m_group_ids_scheduler.cuh",
        "u.group = own_block ? g : peer;",
        "u.group = peer >= 0 ? peer : g;",
        "a B-sharing pair of m-blocks of two groups computes both with the peer's group"),
    "off_by_one_row_range": (
        "scheduler/sm90_m_group_ranges_scheduler.cuh",
        "return Rows{begin, max(begin, min(value, params.m))};",
        "return Rows{begin, max(begin, min(value + 1, params.m))};",
        "a psum / packed group's rows end one row late"),
    "dropped_k_block": (
        "scheduler/sm90_dense_scheduler.cuh",
        "u.kb_begin = u.split * k_blocks_per_split;",
        "u.kb_begin = u.split * k_blocks_per_split + (u.split == 0 && k_blocks_per_split > 1 ? 1 : 0);",
        "the first k-block of every tile (of its first split) is skipped"),
    "wrong_multicast_peer": (
        "collective/sm90_fp8_producer.cuh",
        "m0 + cta_rank * kHalf, bar, 0b11);",
        "m0 + (cta_rank ^ 1) * kHalf, bar, 0b11);",
        "each CTA of an A-sharing pair loads its partner's half of A into its own half's place"),
}
TIMEOUT_S = 900


def probe_tests():
    """The pytest node ids every mutant runs."""
    from kernel_variants import enumerate_kernels, kernel_test_id, kernels_to_run, mutant_probe

    variants = "tests/gpu/test_kernel_variants.py::test_kernel_against_reference"
    probe = mutant_probe(kernels_to_run(enumerate_kernels()))
    return [f"{variants}[{kernel_test_id(k)}]" for k in probe] + ["tests/gpu/test_hostile_device_data.py"]


def make_tree(work, name):
    """An include directory holding a copy of the device headers, with mutant `name` applied (None: the control)."""
    include = os.path.join(work, name or "control", "include")
    shutil.copytree(DEVICE, os.path.join(include, "hopgemm", "device"))
    if name is not None:
        header, text, replacement, _ = MUTANTS[name]
        path = os.path.join(include, "hopgemm", "device", header)
        with open(path) as f:
            source = f.read()
        if source.count(text) != 1:
            raise SystemExit(f"mutant {name}: '{text}' occurs {source.count(text)} times in {header} (expected once): "
                             "update the mutant to the header's current code")
        with open(path, "w") as f:
            f.write(source.replace(text, replacement))
    return include


def start(work, name, tests):
    tree = make_tree(work, name)
    label = name or "control"
    env = dict(os.environ, HOPGEMM_INCLUDE_DIR=tree, HOPGEMM_CACHE_DIR=os.path.join(work, label, "cache"),
               PYTHONUNBUFFERED="1")
    env.pop("HOPGEMM_ACCURACY_LOG", None)  # the suites' measurement, not the mutants'
    env.pop("HOPGEMM_RELIABILITY_DIR", None)
    junit = os.path.join(work, label, "junit.xml")
    log = open(os.path.join(work, label, "pytest.log"), "w")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=line", f"--junitxml={junit}", *tests]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT), junit, log


def outcomes(junit):
    """{test id: "passed" | "failed" | "skipped"} from a junit file."""
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        test = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        out[test] = "failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds else "passed"
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.environ.get("HOPGEMM_RELIABILITY_DIR"))
    parser.add_argument("--only", nargs="*", choices=sorted(MUTANTS))
    parser.add_argument("--list", action="store_true", help="print the mutants and the tests, run nothing")
    args = parser.parse_args()
    names = args.only or list(MUTANTS)
    tests = probe_tests()
    if args.list:
        for name in names:
            print(f"{name}: {MUTANTS[name][3]} ({MUTANTS[name][0]})")
        print("\n".join(tests))
        return 0
    work = tempfile.mkdtemp(prefix="hopgemm-mutants-")
    t0 = time.time()
    runs = {name: start(work, name, tests) for name in [None, *names]}
    results, status = {}, 0
    for name, (proc, junit, log) in runs.items():
        label = name or "control"
        try:
            proc.wait(timeout=max(1, TIMEOUT_S - (time.time() - t0)))
            hung = False
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            hung = True
        log.close()
        found = outcomes(junit) if os.path.exists(junit) else {}
        failed = sorted(t for t, o in found.items() if o != "passed")
        results[label] = {"ran": len(found), "failed": failed, "hung": hung, "exit": proc.returncode}
        if name is not None:
            results[label]["bug"] = MUTANTS[name][3]
    control = results["control"]
    if control["hung"] or control["ran"] == 0:
        print(f"control: the unbroken headers did not run the probe (exit {control['exit']}): no mutant result counts; "
              f"see {work}/control/pytest.log")
        return 1
    if control["failed"]:
        # The unbroken kernels fail these: they are reported, and a mutant is caught only by tests that pass here.
        print(f"control: {len(control['failed'])} probe tests fail on the unbroken headers, not counted as catches: "
              f"{', '.join(t.rsplit('.', 1)[-1] for t in control['failed'])}")
        status = 1
    for name in names:
        results[name]["failed"] = [t for t in results[name]["failed"] if t not in control["failed"]]
    print(f"{'mutant':24} caught by")
    for name in names:
        r = results[name]
        if r["ran"] == 0 and not r["hung"]:
            print(f"{name:24} ran no test (exit {r['exit']}): see {work}/{name}/pytest.log")
            r["caught"] = False
            status = 1
            continue
        caught = r["failed"] or r["hung"]
        r["caught"] = bool(caught)
        shown = ", ".join(t.rsplit(".", 1)[-1] for t in r["failed"][:3])
        more = f" (+{len(r['failed']) - 3})" if len(r["failed"]) > 3 else ""
        print(f"{name:24} {len(r['failed'])} of {r['ran']} tests{' and a hang' if r['hung'] else ''}: {shown}{more}")
        if not caught:
            print(f"  NOT CAUGHT: {r['bug']}")
            status = 1
    caught = sum(results[n]["caught"] for n in names)
    print(f"mutants caught: {caught} / {len(names)} ({len(tests)} probe tests, {time.time() - t0:.0f} s)")
    if args.out:
        with open(os.path.join(args.out, "mutants.json"), "w") as f:
            json.dump({"caught": caught, "mutants": len(names), "probe_tests": len(tests), "results": results}, f,
                      indent=1)
    if status == 0:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"logs kept in {work}")
    return status


if __name__ == "__main__":
    sys.exit(main())
