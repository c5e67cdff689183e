"""The deployment flow on the CPU: kernels precompiled by the `hopgemm` command are found by a Python process that
imported torch first (torch's wheel loads its own, newer NVRTC into the process; hopgemm must still compile with the
one its rule picks, or every precompiled kernel would miss), warm-up from Python, and kernel-cache archives."""
import os
import subprocess
import sys
import tarfile

import pytest

import hopgemm
from conftest import requires_torch

SHAPE = "256x512x1024"  # one dense GEMM of a fixed M: one kernel, about a second to compile


def cli():
    """The `hopgemm` command of this environment (the wheel's console script)."""
    path = os.path.join(os.path.dirname(sys.executable), "hopgemm")
    assert os.access(path, os.X_OK), f"no hopgemm command beside {sys.executable}"
    return path


def run(args, cache, **env):
    environ = dict(os.environ, HOPGEMM_CACHE_DIR=str(cache), **env)
    environ.pop("HOPGEMM_JIT_POLICY", None)
    result = subprocess.run(args, capture_output=True, text=True, env=environ, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def compiler_file_from_info(cache):
    for line in run([cli(), "info"], cache).splitlines():
        if line.startswith("JIT compiler file"):
            return line.split(None, 3)[3]
    raise AssertionError("hopgemm info names no JIT compiler file")


@requires_torch
def test_cli_precompile_then_torch_process_compiles_nothing(tmp_path):
    out = run([cli(), "precompile", "--shape", SHAPE, "--gemms-only", "--jobs", "2"], tmp_path)
    assert "built 1 of 1 kernels (1 compiled, 0 already cached)" in out, out
    cli_compiler = compiler_file_from_info(tmp_path)

    # A server: torch first, then hopgemm with error_on_miss; the same kernel set must come from the cache.
    code = f"""
import torch, hopgemm
maps = open("/proc/self/maps").read()
torch_nvrtc = [l.split()[-1] for l in maps.splitlines() if "libnvrtc" in l and "site-packages" in l]
hopgemm.set_jit_policy("error_on_miss")
report = hopgemm.warmup(shapes=["{SHAPE}"], utility_kernels=False, progress=False, jobs=2)
print("torch_nvrtc", bool(torch_nvrtc))
print("compiled", report.num_compiled, "cached", report.num_cached)
print("compiler", report.compiler)
"""
    out = run([sys.executable, "-c", code], tmp_path)
    lines = dict(line.split(" ", 1) for line in out.strip().splitlines())
    # The case this guards: torch's own NVRTC is in the process before hopgemm compiles anything.
    assert lines["torch_nvrtc"] == "True", out
    assert lines["compiled"] == "0 cached 1", out
    # One compiler, the same file, in both processes: the rule does not depend on what torch loaded.
    assert lines["compiler"].split(", ", 1)[1] == cli_compiler, out

    # Each cache entry says which compiler built it.
    manifests = list(tmp_path.glob("kernels/*/manifest"))
    assert len(manifests) == 1
    fields = dict(line.split("=", 1) for line in manifests[0].read_text().splitlines())
    assert fields["compiler"].startswith("NVRTC ")
    assert fields["compiler_location"] == cli_compiler
    assert f"compiler: {fields['compiler']}, {cli_compiler}" in run([cli(), "cache", "ls"], tmp_path)


@requires_torch
def test_torch_process_compiles_the_same_cubin(tmp_path):
    """NVRTC opened by path next to torch's copy is really that copy: the cubin equals the CLI's, byte for byte."""
    run([cli(), "precompile", "--shape", SHAPE, "--gemms-only", "--jobs", "1"], tmp_path / "cli")
    code = f"""
import torch, hopgemm
report = hopgemm.warmup(shapes=["{SHAPE}"], utility_kernels=False, progress=False, jobs=1)
assert report.num_compiled == 1, report
"""
    run([sys.executable, "-c", code], tmp_path / "torch")
    cli_cubins = list((tmp_path / "cli").glob("kernels/*/kernel.cubin"))
    torch_cubins = list((tmp_path / "torch").glob("kernels/*/kernel.cubin"))
    assert len(cli_cubins) == len(torch_cubins) == 1
    assert cli_cubins[0].parent.name == torch_cubins[0].parent.name  # the same cache key
    assert cli_cubins[0].read_bytes() == torch_cubins[0].read_bytes()


def test_warmup_plans_models_and_shapes():
    problems, kernels, _ = hopgemm.warmup(model="deepseek-v3", tp=8, ep=8, max_tokens=1024, dry_run=True,
                                          progress=False)
    assert problems > 1024 and 15 < kernels < problems
    # The same plan through shapes of one's own: the model's GEMMs as strings.
    shapes = hopgemm._C.warmup_gemms("deepseek-v3", False, [], 8, 8, True)
    assert "m-grouped:32x*x4096x7168" in shapes and "masked:32x*x7168x2048" in shapes
    again = hopgemm.warmup(shapes=shapes, max_tokens=1024, dry_run=True, progress=False)
    assert again[:2] == (problems, kernels)
    # Tuples, with None for the token dimension.
    one = hopgemm.warmup(shapes=[(None, 2112, 7168)], max_tokens=64, dry_run=True, progress=False,
                         utility_kernels=False)
    assert one[0] == 64 and one[1] >= 1


def test_warmup_reads_a_hugging_face_config(tmp_path):
    config = {"hidden_size": 2048, "intermediate_size": 6144, "num_attention_heads": 32, "num_key_value_heads": 4,
              "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768}
    problems, kernels, _ = hopgemm.warmup(model=config, max_tokens=256, dry_run=True, progress=False)
    assert problems > 256 and kernels > 15
    with pytest.raises(ValueError, match="no hidden_size"):
        hopgemm.warmup(model={"num_attention_heads": 8}, dry_run=True)
    with pytest.raises(ValueError, match="unknown model 'gpt-5'"):
        hopgemm.warmup(model="gpt-5", dry_run=True)
    with pytest.raises(ValueError, match="unknown op 'dense'"):
        hopgemm.warmup(shapes=["dense:*x512x1024"], dry_run=True)
    with pytest.raises(ValueError, match="K must be a multiple of 16"):
        hopgemm.warmup(shapes=["*x512x1000"], dry_run=True)


def test_archive_round_trip(tmp_path):
    archive = tmp_path / "kernels.tar"
    run([cli(), "precompile", "--shape", SHAPE, "--gemms-only", "--archive", str(archive)], tmp_path / "a")
    with tarfile.open(archive) as tar:  # a plain tar file
        names = tar.getnames()
    assert any(name.endswith("/kernel.cubin") for name in names) and all(n.startswith("kernels/") for n in names)

    out = run([cli(), "cache", "import", str(archive)], tmp_path / "b")
    assert "added 1 entries" in out, out
    code = f"""
import hopgemm
hopgemm.set_cache_dir({str(tmp_path / "b")!r})
hopgemm.set_jit_policy("error_on_miss")
print(hopgemm.import_cache_archive({str(archive)!r})[:2])
r = hopgemm.warmup(shapes=["{SHAPE}"], utility_kernels=False, progress=False)
print(r.num_compiled, r.num_cached)
"""
    assert run([sys.executable, "-c", code], tmp_path / "b").split("\n")[:2] == ["(0, 1)", "0 1"]

    # A damaged entry is refused, not trusted.
    with tarfile.open(archive) as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
    damaged = tmp_path / "damaged.tar"
    with tarfile.open(damaged, "w", format=tarfile.USTAR_FORMAT) as tar:
        import io
        for member, data in members:
            if member.name.endswith("kernel.cubin"):
                data = data[:-1] + bytes([data[-1] ^ 1])
            tar.addfile(member, io.BytesIO(data))
    environ = dict(os.environ, HOPGEMM_CACHE_DIR=str(tmp_path / "c"))
    result = subprocess.run([cli(), "cache", "import", str(damaged)], capture_output=True, text=True, env=environ)
    assert result.returncode == 1 and "does not match its checksum" in result.stderr, result.stderr


def test_hopgemm_nvrtc_names_the_compiler(tmp_path):
    """HOPGEMM_NVRTC is final: a wrong path is an error naming it, not a silent fall-back to another compiler; a
    right one is the compiler, its version in the cache key (another version compiles its own entries)."""
    environ = dict(os.environ, HOPGEMM_CACHE_DIR=str(tmp_path), HOPGEMM_NVRTC="/nonexistent/libnvrtc.so.13")
    info = subprocess.run([cli(), "info"], capture_output=True, text=True, env=environ, timeout=60).stdout
    assert "JIT compiler           unavailable: NVRTC: cannot open /nonexistent/libnvrtc.so.13 (HOPGEMM_NVRTC)" in info

    wheel_nvrtc = None  # the NVRTC of NVIDIA's pip wheels, where torch brought them
    for entry in sys.path:
        for sub in ("nvidia/cu13/lib/libnvrtc.so.13", "nvidia/cuda_nvrtc/lib/libnvrtc.so.12"):
            if os.path.isfile(os.path.join(entry, sub)):
                wheel_nvrtc = os.path.realpath(os.path.join(entry, sub))
    if wheel_nvrtc is None:
        return  # no second NVRTC on this machine: the first half is the test
    toolkit = compiler_file_from_info(tmp_path)
    run([cli(), "precompile", "--shape", SHAPE, "--gemms-only"], tmp_path)
    out = run([cli(), "precompile", "--shape", SHAPE, "--gemms-only"], tmp_path, HOPGEMM_NVRTC=wheel_nvrtc)
    info = run([cli(), "info"], tmp_path, HOPGEMM_NVRTC=wheel_nvrtc)
    assert f"{wheel_nvrtc} (HOPGEMM_NVRTC)" in info, info
    same_version = toolkit.split(" (")[0] == wheel_nvrtc or "1 already cached" in out
    signatures = {line.split("=", 1)[1] for m in tmp_path.glob("kernels/*/manifest")
                  for line in m.read_text().splitlines() if line.startswith("compiler=")}
    # Two entries where the versions differ (13.0 and 13.2 here), one where they are the same.
    assert len(signatures) == (1 if same_version else 2), (signatures, out)
