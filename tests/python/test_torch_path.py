"""The binding's torch fast path (attribute reads instead of __dlpack__) and stream defaults, against a
stand-in torch in a fresh process, so it runs on any CPU machine."""
import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))


def run_with_fake_torch(body):
    code = "import fake_torch\ntorch = fake_torch.install()\nimport hopgemm\nfrom hopgemm import _C\n" + \
        "import pytest\n" + textwrap.dedent(body)
    env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_torch_tensor_view():
    run_with_fake_torch("""
        x = torch.Tensor((4, 6), (8, 1), torch.bfloat16, "cuda:1", ptr=0x1234)
        info = _C._describe(x)
        assert info == {"data_ptr": 0x1234, "dtype": "bfloat16", "shape": (4, 6), "strides": (8, 1),
                        "device": 1, "torch": True}, info
        for name in ["float8_e4m3fn", "bfloat16", "float16", "float32", "int32", "int64", "uint8"]:
            assert _C._describe(torch.Tensor((2,), dtype=getattr(torch, name)))["dtype"] == name
        with pytest.raises(ValueError, match="dtype torch.float64"):
            _C._describe(torch.Tensor((2,), dtype=torch.float64))
        with pytest.raises(ValueError, match="5 dimensions"):
            _C._describe(torch.Tensor((1, 1, 1, 1, 1), dtype=torch.float32))
    """)


def test_torch_host_and_foreign_devices_rejected():
    run_with_fake_torch("""
        with pytest.raises(ValueError, match="argument 'x' is in host memory"):
            _C._check_tensor(torch.Tensor((2, 2), dtype=torch.float32, device="cpu"), "x")
        with pytest.raises(ValueError, match="argument 'sf' is on device 'mps:0'"):
            _C._check_tensor(torch.Tensor((2, 2), dtype=torch.float32, device="mps:0"), "sf")
        # Host tensors are rejected before any allocation.
        with pytest.raises(ValueError, match="argument 'x' is in host memory"):
            hopgemm.per_token_cast_to_fp8(torch.Tensor((128, 256), dtype=torch.float32, device="cpu"))
    """)


def test_default_stream_is_torch_current_stream_of_the_device():
    run_with_fake_torch("""
        x = torch.Tensor((4, 4), dtype=torch.float32, device="cuda:3")
        assert _C._stream(None, x) == 0x5000 + 3
        assert _C._stream(77, x) == 77

        class TorchStream:
            cuda_stream = 0x99
        assert _C._stream(TorchStream(), x) == 0x99
    """)


def test_outputs_allocated_with_torch_like_the_input():
    run_with_fake_torch("""
        from hopgemm._tensors import empty, empty_strided
        x = torch.Tensor((4, 6), dtype=torch.bfloat16, device="cuda:2")
        out = empty(x, (4, 6), "float8_e4m3fn")
        assert torch.allocations[-1] == ((4, 6), (6, 1), torch.float8_e4m3fn, "cuda:2"), torch.allocations
        out = empty_strided(x, (2, 5, 3), (24, 1, 8), "float32")
        assert torch.allocations[-1] == ((2, 5, 3), (24, 1, 8), torch.float32, "cuda:2")
    """)


def test_import_does_not_touch_torch():
    run_with_fake_torch("""
        assert not torch.allocations
    """)
