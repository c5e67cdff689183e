#!/usr/bin/env python3
"""DeepGEMM's own test files, unmodified, run against hopgemm: `deep_gemm` is hopgemm here (provide_deep_gemm).

    python tests/gpu/deepgemm_files/run.py [--tarball PATH] [--files test_fp8_fp4.py,test_layout.py]
        [--only test_layout.py,test_fp8_fp4.py::test_gemm,...] [--skip FILE::TEST,...] [--nvidia-tools]
        [--timeout SECONDS] [--json OUT.json]

The files come from the anchor tarball (../shared/anchor/deepgemm-54e2261.tgz, or .anchor/ in the checkout on the GPU
machine): only its tests/ folder is extracted, into a temporary folder, so nothing of DeepGEMM's own package can stand
in for the alias. Each file runs in a process of its own, as `python tests/test_x.py` would run it: the tests its
`if __name__ == '__main__':` block calls, in that order, after that block's seeding; here each test runs to its end
or its first exception, and the next one still runs. A test ends as
  passed
  failed            an exception (its traceback is printed and kept in the JSON)
  expected-missing  it stopped on a DeepGEMM name hopgemm does not have yet, listed in MISSING with the work that
                    brings it (an AttributeError / ImportError naming it); once hopgemm has the name, the same
                    failure counts as failed
  filtered          deep_gemm.testing.test_filter left it out on this GPU (DeepGEMM's own way to skip a test)
  timeout           still running when the file's --timeout ran out (the file's later tests are not run)
Exit status: 0 when nothing failed or timed out. --nvidia-tools sets DG_USE_NVIDIA_TOOLS=1, under which
bench_kineto returns 1 without profiling (DeepGEMM's mode for sanitizers): the correctness checks alone, faster.
scripts/gpu_check.sh deepgemm-files runs it on the GPU machine.
"""
import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
TARBALL_NAME = "deepgemm-54e2261.tgz"
# The files of the issue, in the order they run; the first two need nothing hopgemm lacks.
FILES = ("test_fp8_fp4.py", "test_layout.py", "test_bf16.py", "test_attention.py", "test_einsum.py",
         "test_hyperconnection.py")

_ABSENT = "absent by design (docs/MIGRATION.md, 'Absent')"
_BF16 = "the BF16 GEMMs (issue 28)"
_INDEXER = "the DeepSeek-V3.2 indexer kernels (issue 30)"
# DeepGEMM names hopgemm does not have yet -> the work that brings them.
MISSING = {
    "init_dist": _ABSENT, "uneven_all_gather": _ABSENT,
    **{f"bf16_gemm_{m}": _BF16 for m in ("nt", "nn", "tn", "tt")},
    "m_grouped_bf16_gemm_nt_contiguous": _BF16, "m_grouped_bf16_gemm_nn_contiguous": _BF16,
    "m_grouped_bf16_gemm_nt_masked": _BF16, "k_grouped_bf16_gemm_tn_contiguous": _BF16,
    "bf16_m_grouped_gemm_nt_masked": _BF16,
    "fp8_mqa_logits": _INDEXER, "fp8_paged_mqa_logits": _INDEXER, "fp8_fp4_mqa_logits": _INDEXER,
    "fp8_fp4_paged_mqa_logits": _INDEXER, "get_paged_mqa_logits_metadata": _INDEXER,
}


def find_tarball(explicit=None):
    for path in (explicit, os.environ.get("HOPGEMM_DEEPGEMM_TARBALL"), os.path.join(ROOT, ".anchor", TARBALL_NAME),
                 os.path.join(os.path.dirname(ROOT), "shared", "anchor", TARBALL_NAME),
                 os.path.join("/work/shared/anchor", TARBALL_NAME)):
        if path and os.path.isfile(path):
            return path
    return None


def extract_tests(tarball, into):
    """DeepGEMM's tests/*.py into `into`; returns that folder."""
    with tarfile.open(tarball) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")
            if member.isfile() and len(parts) == 3 and parts[1] == "tests" and parts[2].endswith(".py"):
                member.name = parts[2]
                tar.extract(member, into)
    return into


# ---- one file, in its own process -------------------------------------------------------------------------------


class _CallsToRunner(ast.NodeTransformer):
    """Rewrites each statement `test_x(...)` of the __main__ block into `__dg_run__('test_x', lambda: test_x(...))`."""

    def visit_Expr(self, node):
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id.startswith("test_"):
            runner = ast.Call(func=ast.Name("__dg_run__", ast.Load()),
                              args=[ast.Constant(call.func.id),
                                    ast.Lambda(ast.arguments([], [], None, [], [], None, []), call)], keywords=[])
            return ast.copy_location(ast.Expr(runner), node)
        return node


def main_block(path):
    """The body of the file's `if __name__ == '__main__':` with its test calls going through __dg_run__."""
    tree = ast.parse(open(path).read(), path)
    for node in tree.body:
        test = node.test if isinstance(node, ast.If) else None
        if (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == "__main__"):
            body = ast.Module(body=[_CallsToRunner().visit(stmt) for stmt in node.body], type_ignores=[])
            return compile(ast.fix_missing_locations(body), path, "exec")
    raise SystemExit(f"{path}: no `if __name__ == '__main__':` block")


def missing_name(error, deep_gemm):
    """The DeepGEMM name that an AttributeError or ImportError says hopgemm lacks, where MISSING lists it and hopgemm
    still lacks it; else None."""
    if not isinstance(error, (AttributeError, ImportError)):
        return None
    match = re.search(r"(?:has no attribute|cannot import name) '(\w+)'", str(error))
    name = match.group(1) if match else getattr(error, "name", None)
    return name if name in MISSING and not hasattr(deep_gemm, name) else None


def run_file(path, results_path):
    """Child process: import the file as a module, then run its __main__ block, one JSON line per test."""
    import importlib.util

    import hopgemm

    if not hopgemm.provide_deep_gemm(force=True):
        raise SystemExit("deep_gemm does not resolve to hopgemm")
    import deep_gemm
    assert deep_gemm is hopgemm
    from hopgemm import testing

    out = open(results_path, "a")
    file = os.path.basename(path)

    def record(test, status, seconds, detail=""):
        out.write(json.dumps(dict(file=file, test=test, status=status, seconds=round(seconds, 1), detail=detail))
                  + "\n")
        out.flush()
        last = detail.strip().splitlines()[-1] if detail.strip() else ""
        print(f"== {file}::{test}: {status} ({seconds:.1f} s){': ' + last if last else ''}", flush=True)

    def classify(test, error, started):
        name = missing_name(error, deep_gemm)
        if name is not None:
            record(test, "expected-missing", time.time() - started, f"{name}: {MISSING[name]}")
        else:
            traceback.print_exc()
            record(test, "failed", time.time() - started, "".join(traceback.format_exception(error)))

    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location(f"deepgemm_{file[:-3]}", path)
    module = importlib.util.module_from_spec(spec)
    started = time.time()
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the file's imports: a name hopgemm lacks stops every test of it
        classify("<import>", e, started)
        return

    only = set(filter(None, os.environ.get("DG_FILES_ONLY", "").split(",")))
    skip = set(filter(None, os.environ.get("DG_FILES_SKIP", "").split(",")))

    def run_test(test, call):
        name = f"{file}::{test}"
        if (only and name not in only and file not in only) or name in skip:
            return
        print(f"\n== {file}::{test}", flush=True)
        filtered_before = len(testing._filtered)
        started = time.time()
        try:
            call()
        except Exception as e:
            classify(test, e, started)
            return
        status = "filtered" if len(testing._filtered) > filtered_before else "passed"
        record(test, status, time.time() - started)

    module.__dict__["__dg_run__"] = run_test
    exec(main_block(path), module.__dict__)


# ---- the parent ---------------------------------------------------------------------------------------------------


def run_all(tests_dir, files, timeout, only, skip=()):
    """Runs `files` of `tests_dir`, each in its own process; `only` / `skip`: FILE::TEST names (a bare FILE in `only`:
    all of its tests)."""
    results = []
    for file in files:
        path = os.path.join(tests_dir, file)
        with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as f:
            results_path = f.name
        env = dict(os.environ, DG_FILES_ONLY=",".join(only), DG_FILES_SKIP=",".join(skip))
        started = time.time()
        print(f"\n======== {file}", flush=True)
        try:
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", path, results_path],
                                  cwd=tests_dir, env=env, timeout=timeout)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
        with open(results_path) as f:
            done = [json.loads(line) for line in f if line.strip()]
        os.unlink(results_path)
        if code == "timeout":
            done.append(dict(file=file, test="<rest of the file>", status="timeout",
                             seconds=round(time.time() - started, 1), detail=f"--timeout {timeout} s ran out"))
        elif code != 0:
            done.append(dict(file=file, test="<process>", status="failed", seconds=round(time.time() - started, 1),
                             detail=f"the file's process exited with status {code}"))
        results += done
    return results


def summary(results):
    lines = [f"{'test':58} {'status':17} {'seconds':>7}  detail"]
    for r in results:
        detail = r["detail"].splitlines()[-1] if r["status"] == "failed" and r["detail"] else r["detail"]
        lines.append(f"{r['file'] + '::' + r['test']:58} {r['status']:17} {r['seconds']:7.1f}  {detail[:120]}")
    counts = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    lines.append(", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return "\n".join(lines), counts


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        run_file(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tarball")
    parser.add_argument("--files", default=",".join(FILES))
    parser.add_argument("--only", default="", help="FILE or FILE::TEST, comma-separated: run just these")
    parser.add_argument("--skip", default="", help="FILE::TEST,...: leave these out")
    parser.add_argument("--nvidia-tools", action="store_true", help="DG_USE_NVIDIA_TOOLS=1: bench_kineto returns 1")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per file")
    parser.add_argument("--json")
    args = parser.parse_args()
    tarball = find_tarball(args.tarball)
    if tarball is None:
        sys.exit(f"no {TARBALL_NAME}: pass --tarball, set HOPGEMM_DEEPGEMM_TARBALL, or carry .anchor/")
    if args.nvidia_tools:
        os.environ["DG_USE_NVIDIA_TOOLS"] = "1"
    only = [o for o in args.only.split(",") if o]
    skip = [o for o in args.skip.split(",") if o]
    files = [f for f in args.files.split(",") if f]
    if only:
        files = [f for f in files if any(o == f or o.startswith(f + "::") for o in only)]
    import hopgemm

    info = hopgemm.device_info()
    with tempfile.TemporaryDirectory(prefix="deepgemm-tests-") as tmp:
        tests_dir = extract_tests(tarball, tmp)
        results = run_all(tests_dir, files, args.timeout, only, skip)
    table, counts = summary(results)
    print(f"\n== DeepGEMM's test files ({os.path.basename(tarball)}) against hopgemm {hopgemm.__version__} on "
          f"{info.name} (sm_{info.arch_major}{info.arch_minor})"
          f"{', DG_USE_NVIDIA_TOOLS=1' if args.nvidia_tools else ''}\n{table}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(anchor=os.path.basename(tarball), hopgemm=hopgemm.__version__, gpu=info.name,
                           nvidia_tools=args.nvidia_tools, counts=counts, results=results), f, indent=1)
    sys.exit(1 if counts.get("failed") or counts.get("timeout") else 0)


if __name__ == "__main__":
    main()
