"""`./scripts/bench.sh`, the README's first command, leaves the Python package and its `hopgemm` command installed in
the environment it set up (issue 32, item 6: it once built only the CLI, and `import hopgemm` failed afterwards).
Run in this test's own environment and build directory (scripts/test.sh's), so the package build is incremental; with
no GPU the script's precompile only counts the suite's kernels (--dry-run), with one it benchmarks one small shape."""
import glob
import os
import subprocess
import sys
import sysconfig

import hopgemm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_dir():
    if os.environ.get("HOPGEMM_BUILD_DIR"):
        return os.environ["HOPGEMM_BUILD_DIR"]
    if os.environ.get("HOPGEMM_WHEEL"):  # scripts/test.sh: $BUILD_DIR/wheel/hopgemm-*.whl
        return os.path.dirname(os.path.dirname(os.environ["HOPGEMM_WHEEL"]))
    return os.path.join(ROOT, "build")


def installed_record():
    records = glob.glob(os.path.join(sysconfig.get_paths()["purelib"], "hopgemm-*.dist-info", "RECORD"))
    assert len(records) == 1, records
    return records[0]


def test_bench_script_installs_the_package_and_its_command(tmp_path):
    before = os.stat(installed_record()).st_mtime_ns
    if hopgemm.gpu_available():
        args = ["--shape", "128x256x512", "--iters", "3", "--out", str(tmp_path / "bench.json")]
    else:
        args = ["--dry-run"]
    bin_dir = os.path.dirname(sys.executable)
    env = dict(os.environ, HOPGEMM_VENV=sys.prefix, HOPGEMM_BUILD_DIR=build_dir(), HOPGEMM_CACHE_DIR=str(tmp_path),
               PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    result = subprocess.run([os.path.join(ROOT, "scripts", "bench.sh"), *args], capture_output=True, text=True,
                            env=env, timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "building and installing the hopgemm package and command" in result.stdout, result.stdout
    if not hopgemm.gpu_available():
        assert "distinct kernels (nothing compiled)" in result.stdout, result.stdout

    # Installed again by the script (not left from an earlier build), importable in a new process, command included.
    assert os.stat(installed_record()).st_mtime_ns > before
    out = subprocess.run([sys.executable, "-c", "import hopgemm; print(hopgemm.__version__, hopgemm.__file__)"],
                         capture_output=True, text=True, cwd="/", check=True).stdout.split()
    assert out[1].startswith(sysconfig.get_paths()["purelib"]), out
    command = subprocess.run([os.path.join(bin_dir, "hopgemm"), "--version"], capture_output=True, text=True,
                             check=True).stdout
    assert command.strip() == f"hopgemm {out[0]}"
