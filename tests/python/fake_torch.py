"""A stand-in for the parts of torch that hopgemm's binding reads, to test the torch path on machines
without torch (or without a GPU). Install it with install() before importing hopgemm, in a fresh process."""
import sys
import types

DTYPES = ["float8_e4m3fn", "bfloat16", "float16", "float32", "int32", "int64", "uint8", "float64"]
ITEMSIZE = {"float8_e4m3fn": 1, "bfloat16": 2, "float16": 2, "float32": 4, "int32": 4, "int64": 8, "uint8": 1,
            "float64": 8}


class dtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


class TensorBase:
    pass


class Tensor(TensorBase):
    """A strided 'tensor' with a fake address: enough for the binding, which never dereferences it."""

    def __init__(self, shape, strides=None, dtype=None, device="cuda:0", ptr=0x10000):
        self._shape = tuple(shape)
        if strides is None:
            strides, stride = [0] * len(shape), 1
            for d in range(len(shape) - 1, -1, -1):
                strides[d], stride = stride, stride * max(shape[d], 1)
        self._strides = tuple(strides)
        self.dtype = dtype
        self.device = device
        self._ptr = ptr

    shape = property(lambda self: self._shape)
    is_cuda = property(lambda self: self.device.startswith("cuda"))

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._strides

    def get_device(self):
        return int(self.device.split(":")[1]) if self.is_cuda else -1


def install():
    torch = types.ModuleType("torch")
    torch._C = types.ModuleType("torch._C")
    torch._C.TensorBase = TensorBase
    torch._C._cuda_getCurrentRawStream = lambda device: 0x5000 + device
    torch.Tensor = Tensor
    for name in DTYPES:
        setattr(torch, name, dtype(name))
    torch.allocations = []

    def empty_strided(shape, strides, dtype=None, device=None):
        torch.allocations.append((tuple(shape), tuple(strides), dtype, device))
        return Tensor(shape, strides, dtype, device, ptr=0x20000)

    torch.empty_strided = empty_strided
    sys.modules["torch"] = torch
    return torch
