"""The wheel as a user gets it: installed into a fresh virtual environment (no system packages, no torch), it imports,
its `hopgemm` command runs and compiles a kernel with the package's own device headers, it names no toolkit path as a
run path, and it carries the license pyproject names. scripts/build.sh leaves the wheel in $BUILD_DIR/wheel and
scripts/test.sh passes it as HOPGEMM_WHEEL; without it the test builds one (minutes)."""
import glob
import os
import re
import subprocess
import sys
import venv
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    given = os.environ.get("HOPGEMM_WHEEL")
    if given:
        assert os.path.isfile(given), f"HOPGEMM_WHEEL={given} is not a file"
        return given
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps", "-w", str(out),
                    ROOT], check=True, timeout=3600)
    return glob.glob(str(out / "hopgemm-*.whl"))[0]


@pytest.fixture(scope="module")
def fresh_env(wheel, tmp_path_factory):
    env_dir = tmp_path_factory.mktemp("fresh-venv")
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    python = str(env_dir / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", wheel], check=True, timeout=300)
    return env_dir


def run(args, **env):
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("HOPGEMM_", "PYTHON"))}
    environ.update(env)
    result = subprocess.run(args, capture_output=True, text=True, env=environ, timeout=300, cwd="/")
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_imports_and_runs_its_command(fresh_env, tmp_path):
    python, command = str(fresh_env / "bin" / "python"), str(fresh_env / "bin" / "hopgemm")
    out = run([python, "-c", "import sys, hopgemm; print(hopgemm.__version__, 'torch' in sys.modules)"])
    version, torch_loaded = out.split()
    assert version != "0+unknown" and torch_loaded == "False"
    assert run([command, "--version"]).strip() == f"hopgemm {version}"
    info = run([command, "info"])
    headers = [line for line in info.splitlines() if line.startswith("device headers")][0]
    assert str(fresh_env) in headers, info  # the package's own copy, found beside the command
    out = run([command, "precompile", "--shape", "128x256x512", "--gemms-only", "--jobs", "2"],
              HOPGEMM_CACHE_DIR=str(tmp_path))
    assert "built 1 of 1 kernels" in out, out


def test_no_toolkit_run_path_and_a_license(wheel, tmp_path):
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        binaries = [n for n in names if n.endswith(".so") or n.endswith("/bin/hopgemm")]
        assert any(n.startswith("hopgemm/_C") for n in binaries) and "hopgemm/bin/hopgemm" in binaries, names
        for name in binaries:
            path = whl.extract(name, tmp_path)
            dynamic = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
            run_paths = [line for line in dynamic.splitlines() if "RPATH" in line or "RUNPATH" in line]
            # Only paths relative to the package (NVIDIA's pip wheels beside it), never a toolkit's place.
            assert all("$ORIGIN" in line and "/usr/" not in line for line in run_paths), (name, run_paths)
            assert "libnvrtc" not in dynamic, (name, dynamic)  # NVRTC is opened by path at run time
        licenses = [n for n in names if n.endswith("LICENSE")]
        assert licenses, names
        assert whl.read(licenses[0]).startswith(b"MIT License")
        metadata = whl.read([n for n in names if n.endswith(".dist-info/METADATA")][0]).decode()
    # The summary is pyproject's one description (tests/python/test_docs.py checks it names what exists).
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        description = re.search(r'^description = "([^"]*)"', f.read(), re.M).group(1)
    assert f"\nSummary: {description}\n" in metadata.split("\n\n", 1)[0]
    assert metadata.count("Requires-Dist: torch") == 1
    assert "hopgemm = hopgemm._cli:main" in zipfile.ZipFile(wheel).read(
        [n for n in names if n.endswith("entry_points.txt")][0]).decode()
