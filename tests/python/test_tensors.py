"""Tensor conversion (DLPack and torch) and stream arguments, checked on the CPU."""
import numpy as np
import pytest

import hopgemm
from hopgemm import _C

from conftest import requires_torch


@pytest.mark.parametrize("dtype, name", [
    (np.float32, "float32"), (np.float16, "float16"), (np.int32, "int32"), (np.int64, "int64"),
    (np.uint8, "uint8"),
])
def test_describe_dtypes(dtype, name):
    x = np.zeros((3, 5), dtype=dtype)
    info = _C._describe(x)
    assert info["dtype"] == name
    assert info["shape"] == (3, 5)
    assert info["strides"] == (5, 1)
    assert info["device"] == -1
    assert info["data_ptr"] == x.ctypes.data
    assert info["torch"] is False


def test_describe_strides_in_elements():
    x = np.zeros((4, 6, 8), dtype=np.float32)
    assert _C._describe(x[:, ::2, 1:])["strides"] == (48, 16, 1)
    assert _C._describe(x.transpose(2, 0, 1))["strides"] == (1, 48, 8)
    view = x[1:, 2:, 3:]
    assert _C._describe(view)["data_ptr"] == view.ctypes.data
    assert _C._describe(np.float32(1.0).reshape(()))["shape"] == ()


def test_unsupported_dtype_is_value_error():
    with pytest.raises(ValueError, match="float64"):
        _C._describe(np.zeros(4, dtype=np.float64))
    with pytest.raises(ValueError, match="bool"):
        _C._describe(np.zeros(4, dtype=np.bool_))


def test_too_many_dimensions():
    with pytest.raises(ValueError, match="5 dimensions"):
        _C._describe(np.zeros((1, 1, 1, 1, 1), dtype=np.float32))


def test_not_a_tensor_is_type_error():
    with pytest.raises(TypeError, match="argument 'x' must be a tensor"):
        _C._describe([1.0, 2.0])
    with pytest.raises(TypeError, match="argument 'sf' must be a tensor"):
        _C.is_mn_major_tma_aligned("not a tensor")


HOST_MEMORY = r"argument '(x|sf)' is in host memory"


def test_host_arrays_rejected_by_ops():
    x = np.ones((128, 256), dtype=np.float32)
    sf = np.ones((128, 2), dtype=np.float32)
    with pytest.raises(ValueError, match=HOST_MEMORY):
        hopgemm.per_token_cast_to_fp8(x)
    with pytest.raises(ValueError, match=HOST_MEMORY):
        hopgemm.per_block_cast_to_fp8(x)
    with pytest.raises(ValueError, match=HOST_MEMORY):
        hopgemm.per_channel_cast_to_fp8(x)
    with pytest.raises(ValueError, match=HOST_MEMORY):
        hopgemm.get_mn_major_tma_aligned_tensor(sf)
    with pytest.raises(ValueError, match=HOST_MEMORY):
        hopgemm.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf)
    with pytest.raises(ValueError, match=HOST_MEMORY):
        hopgemm.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf.T.copy(), np.zeros(2, np.int32), [128, 128],
                                                                           128, 128)
    with pytest.raises(ValueError, match=HOST_MEMORY):
        hopgemm.transform_sf_into_required_layout(sf, 128, 256, (1, 128, 128), is_sfa=True)
    with pytest.raises(ValueError, match=HOST_MEMORY):
        _C.per_token_cast_to_fp8(x, np.empty(x.shape, np.uint8), sf)


def test_gemm_arguments():
    a = np.zeros((128, 128), dtype=np.uint8)
    sf = np.ones((128, 1), dtype=np.float32)
    d = np.zeros((128, 128), dtype=np.float32)
    with pytest.raises(ValueError, match="argument 'a' is in host memory"):
        hopgemm.fp8_gemm_nt((a, sf), (a, sf), d)
    with pytest.raises(TypeError, match="argument 'a' must be a \\(tensor, scale factors\\) pair"):
        hopgemm.fp8_gemm_nt(a, (a, sf), d)
    with pytest.raises(TypeError, match="argument 'a' must be a \\(tensor, scale factors\\) pair, got 3"):
        hopgemm.fp8_gemm_nt((a, sf, sf), (a, sf), d)
    with pytest.raises(ValueError, match="recipe_a and recipe_b go together"):
        hopgemm.fp8_gemm_nt((a, sf), (a, sf), d, recipe_a=(1, 128))
    with pytest.raises(ValueError, match="not both"):
        hopgemm.fp8_gemm_nt((a, sf), (a, sf), d, recipe=(1, 1, 128), recipe_a=(1, 128), recipe_b=(1, 128))
    with pytest.raises(NotImplementedError, match="share gran_k"):
        hopgemm.fp8_gemm_nt((a, sf), (a, sf), d, recipe_a=(1, 128), recipe_b=(128, 32))
    with pytest.raises(TypeError):
        hopgemm.fp8_gemm_nt((a, sf), (a, sf), d, recipe=(1, 128))


def test_stream_argument():
    assert _C._stream(None) == 0
    assert _C._stream(0) == 0
    assert _C._stream(0x1234) == 0x1234

    class Protocol:
        def __cuda_stream__(self):
            return (0, 77)

    class TorchLike:
        cuda_stream = 88

    class CupyLike:
        ptr = 99

    assert _C._stream(Protocol()) == 77
    assert _C._stream(TorchLike()) == 88
    assert _C._stream(CupyLike()) == 99
    with pytest.raises(TypeError, match="stream must be"):
        _C._stream("default")
    with pytest.raises(TypeError, match="stream must be"):
        _C._stream(True)
    with pytest.raises(ValueError, match="non-negative"):
        _C._stream(-5)


@requires_torch
def test_torch_tensors_described_directly():
    import torch

    x = torch.zeros(4, 8, dtype=torch.bfloat16)[:, 2:]
    info = _C._describe(x)
    assert info["torch"] is True
    assert info["dtype"] == "bfloat16"
    assert info["shape"] == (4, 6)
    assert info["strides"] == (8, 1)
    assert info["data_ptr"] == x.data_ptr()
    assert info["device"] == -1
    assert _C._describe(torch.zeros(2, dtype=torch.float8_e4m3fn))["dtype"] == "float8_e4m3fn"
    with pytest.raises(ValueError, match="torch.float64"):
        _C._describe(torch.zeros(2, dtype=torch.float64))


@requires_torch
def test_torch_cpu_tensors_rejected():
    import torch

    x = torch.randn(128, 256)
    with pytest.raises(ValueError, match="argument 'x' is in host memory"):
        hopgemm.per_token_cast_to_fp8(x)
    with pytest.raises(ValueError, match="argument 'sf' is in host memory"):
        hopgemm.get_mn_major_tma_aligned_tensor(torch.randn(128, 2))
