"""Output allocation in the caller's framework.

Ops that return new tensors allocate them like their input: with torch for torch tensors (same device),
with CuPy for CuPy arrays. Neither framework is imported here: a torch tensor can only exist once the
caller has imported torch, so it is looked up in ``sys.modules``.
"""
import sys

from typing import Any

from . import _C

# What the ops take for a tensor: a torch tensor, or any DLPack array on a CUDA device (CuPy, JAX, ...). An alias,
# so that signatures say what an argument is while type checkers accept every framework.
Tensor = Any

# CuPy has no float8 type: e4m3 values are held as their uint8 bit patterns (the C++ binding reads
# uint8 arrays as e4m3 where an op expects FP8).
_CUPY_DTYPES = {"float8_e4m3fn": "uint8"}


def _torch_tensor_type():
    torch = sys.modules.get("torch")
    return None if torch is None else torch.Tensor


def is_torch_tensor(x):
    tensor_type = _torch_tensor_type()
    return tensor_type is not None and isinstance(x, tensor_type)


def _storage_extent(shape, strides):
    """Number of elements a strided view spans (0 for an empty one)."""
    if any(s == 0 for s in shape):
        return 0
    return 1 + sum((s - 1) * st for s, st in zip(shape, strides))


def empty_strided(like, shape, strides, dtype, name="x"):
    """An uninitialised tensor with `shape`, `strides` (elements) and `dtype` (a name such as
    'float32' or 'float8_e4m3fn') on the device of `like`, in the framework of `like`. `name` is the
    argument `like` was passed as, for errors."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(like, torch.Tensor):
        return torch.empty_strided(shape, strides, dtype=getattr(torch, dtype), device=like.device)
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(like, cupy.ndarray):
        np_dtype = cupy.dtype(_CUPY_DTYPES.get(dtype, dtype))
        with cupy.cuda.Device(like.device.id):
            base = cupy.empty(max(_storage_extent(shape, strides), 1), dtype=np_dtype)
        return cupy.ndarray(tuple(shape), dtype=np_dtype, memptr=base.data,
                            strides=tuple(st * np_dtype.itemsize for st in strides))
    # Not a framework we allocate with: report host memory or a bad type as an op would.
    _C._check_tensor(like, name)
    raise NotImplementedError(
        f"hopgemm allocates outputs with torch or CuPy only; got {type(like).__module__}."
        f"{type(like).__qualname__} (call the in-place _C op with your own output)")


def empty(like, shape, dtype, name="x"):
    """As empty_strided, contiguous."""
    strides, stride = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = stride
        stride *= max(shape[d], 1)
    return empty_strided(like, tuple(shape), tuple(strides), dtype, name)


def shape_of(x, name="x"):
    """The shape of `x` as ints; for something that is not a tensor, the error an op would raise for argument
    `name`."""
    try:
        return tuple(int(s) for s in x.shape)
    except AttributeError:
        _C._check_tensor(x, name)
        raise
