"""tests/gpu/deepgemm_files/run.py, the runner of DeepGEMM's test files, on synthetic test files (CPU): each test of a
file's __main__ block runs in order and ends passed / failed / expected-missing / filtered; a failure does not stop the
file; a missing name is expected only while hopgemm lacks it."""
import importlib.util
import os
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location("deepgemm_files_run",
                                              os.path.join(ROOT, "tests", "gpu", "deepgemm_files", "run.py"))
run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)

FILE = '''
import deep_gemm
from deep_gemm.testing import test_filter
from helpers import value  # the test folder is on the path, as DeepGEMM's generators.py is


def test_ok():
    assert deep_gemm.ceil_div(3, 2) == value()


@test_filter(lambda: False)
def test_sm100_only():
    raise AssertionError("must not run")


def test_missing():
    deep_gemm.init_dist(0, 1)


def test_broken():
    assert deep_gemm.align(3, 4) == 5, "align"


def test_not_called():
    raise AssertionError("not in the __main__ block")


if __name__ == "__main__":
    import random
    random.seed(0)
    test_ok()
    test_sm100_only()
    test_missing()
    test_broken()
    if value() == 2:
        test_ok()
'''


def test_runner_classifies_each_test(tmp_path):
    (tmp_path / "helpers.py").write_text("def value():\n    return 2\n")
    (tmp_path / "test_synthetic.py").write_text(textwrap.dedent(FILE))
    (tmp_path / "test_imports_missing.py").write_text(
        "from deep_gemm import uneven_all_gather\n\nif __name__ == '__main__':\n    pass\n")
    results = run.run_all(str(tmp_path), ["test_synthetic.py", "test_imports_missing.py"], timeout=120, only=[])
    statuses = [(r["file"], r["test"], r["status"]) for r in results]
    assert statuses == [
        ("test_synthetic.py", "test_ok", "passed"),
        ("test_synthetic.py", "test_sm100_only", "filtered"),
        ("test_synthetic.py", "test_missing", "expected-missing"),
        ("test_synthetic.py", "test_broken", "failed"),
        ("test_synthetic.py", "test_ok", "passed"),
        ("test_imports_missing.py", "<import>", "expected-missing"),
    ], statuses
    assert results[2]["detail"].startswith("init_dist: absent by design")
    assert "AssertionError: align" in results[3]["detail"]
    table, counts = run.summary(results)
    assert counts == {"passed": 2, "filtered": 1, "expected-missing": 2, "failed": 1}
    assert "test_synthetic.py::test_broken" in table

    only = run.run_all(str(tmp_path), ["test_synthetic.py"], timeout=120, only=["test_synthetic.py::test_broken"])
    assert [(r["test"], r["status"]) for r in only] == [("test_broken", "failed")]


def test_a_name_hopgemm_has_is_never_expected_missing():
    import hopgemm

    class Lacking:
        pass

    error = AttributeError("module 'hopgemm' has no attribute 'init_dist'")
    assert run.missing_name(error, Lacking()) == "init_dist"
    present = type("Present", (), {"init_dist": None})()
    assert run.missing_name(error, present) is None  # hopgemm has it now: the failure is a real one
    assert run.missing_name(AttributeError("module 'hopgemm' has no attribute 'fp8_gemm_nt'"), hopgemm) is None
    assert run.missing_name(ImportError("cannot import name 'uneven_all_gather' from 'deep_gemm'"),
                            Lacking()) == "uneven_all_gather"
    assert run.missing_name(ValueError("init_dist"), Lacking()) is None
