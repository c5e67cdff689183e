"""Argument errors say which argument and come before anything asks the device (issue 32, item 5): None where a tensor
is required names the argument (not nanobind's generic "incompatible function arguments"), and a wrong dtype, recipe
or size reaches the user as itself on a machine without a GPU. Stand-in torch tensors on "cuda" (fake_torch.py), in
a fresh process, get the calls past the host-memory check."""
import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))


def run_with_fake_torch(body):
    code = "import fake_torch\ntorch = fake_torch.install()\nimport hopgemm\nimport pytest\n" + textwrap.dedent(body)
    env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_none_names_the_argument():
    run_with_fake_torch("""
        T = torch.Tensor
        a = (T((256, 512), dtype=torch.float8_e4m3fn, ptr=0x100000), T((256, 4), dtype=torch.float32, ptr=0x200000))
        b = (T((512, 512), dtype=torch.float8_e4m3fn, ptr=0x300000), T((4, 4), dtype=torch.float32, ptr=0x400000))
        d = T((256, 512), dtype=torch.bfloat16, ptr=0x500000)
        ids = T((256,), dtype=torch.int32, ptr=0x600000)
        cases = [
            ("d", lambda: hopgemm.fp8_gemm_nt(a, b, None)),
            ("a", lambda: hopgemm.fp8_gemm_nn(None, b, d)),
            ("b", lambda: hopgemm.m_grouped_fp8_gemm_nt_contiguous(a, None, d, ids)),
            ("masked_m", lambda: hopgemm.m_grouped_fp8_gemm_nt_masked(a, b, d, None, 64)),
            ("x", lambda: hopgemm.per_token_cast_to_fp8(None)),
            ("sf", lambda: hopgemm.get_mn_major_tma_aligned_tensor(None)),
        ]
        for name, call in cases:
            with pytest.raises(TypeError) as info:
                call()
            message = str(info.value)
            assert f"argument '{name}'" in message and "incompatible function arguments" not in message, message
    """)


def test_argument_errors_before_the_device():
    # Without a GPU, any device query fails with "no GPU": these must fail on their argument first.
    run_with_fake_torch("""
        T = torch.Tensor
        a = (T((256, 512), dtype=torch.float8_e4m3fn, ptr=0x100000), T((256, 4), dtype=torch.float32, ptr=0x200000))
        b = (T((512, 512), dtype=torch.float8_e4m3fn, ptr=0x300000), T((4, 4), dtype=torch.float32, ptr=0x400000))
        d = T((256, 512), dtype=torch.bfloat16, ptr=0x500000)
        if hopgemm.gpu_available():
            hopgemm.set_num_sms(0)
        bad_sfa = (a[0], T((256, 4), dtype=torch.bfloat16, ptr=0x200000))
        with pytest.raises(ValueError, match="argument 'sfa' must be float32, got bfloat16"):
            hopgemm.fp8_gemm_nt(bad_sfa, b, d)
        with pytest.raises(NotImplementedError, match=r"recipe \\(2, 2, 2\\) is not supported"):
            hopgemm.fp8_gemm_nt(a, b, d, recipe=(2, 2, 2))
    """)
