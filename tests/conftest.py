"""GPU tests on a GPU machine must run: with HOPGEMM_REQUIRE_GPU=1 (scripts/gpu_check.sh sets it) a skip anywhere under
tests/gpu, of a whole module (no torch, no SM90 GPU seen, a missing package) or of one test, fails instead, naming the
reason it would have skipped for. Elsewhere (a machine without a GPU, CI) they skip as usual. (Here rather than in
tests/gpu: tests/python imports its own conftest by name, which a second conftest loaded after it would shadow.)"""
import os

import pytest

REQUIRE_GPU = os.environ.get("HOPGEMM_REQUIRE_GPU", "") not in ("", "0")
GPU_TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu") + os.sep


def _fail_skip(report, path, where):
    if REQUIRE_GPU and report.skipped and str(path).startswith(GPU_TESTS):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"{where} skipped on a GPU machine (HOPGEMM_REQUIRE_GPU=1): {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _fail_skip(outcome.get_result(), collector.path, f"module {collector.nodeid}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _fail_skip(outcome.get_result(), item.path, f"test {item.nodeid}")
