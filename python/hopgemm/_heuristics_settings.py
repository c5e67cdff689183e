"""DeepGEMM's two heuristics settings, with what they mean for hopgemm's kernels."""
from __future__ import annotations

from typing import Tuple, Union

from . import _C

__all__ = ["set_ignore_compile_dims", "set_block_size_multiple_of"]

# Every block_n hopgemm's heuristics and tuning tables choose is a multiple of this (the WGMMA N granularity for
# e4m3; 1D2D steps by 16), and every block_m a multiple of 64.
_BLOCK_N_GRANULE = 8


def set_ignore_compile_dims(value: bool, /) -> None:
    """deep_gemm's switch to stop compiling problem dimensions (compiled_dims) into kernels. hopgemm never compiles a
    problem dimension into a kernel (M, N, K and the group sizes are launch parameters: one cubin serves every shape
    of its class), so there is nothing to switch off: the call only checks its argument."""
    if not isinstance(value, (bool, int)):
        raise _C.HopgemmTypeError(f"set_ignore_compile_dims: expected a bool, got {type(value).__name__}")


def set_block_size_multiple_of(value: Union[int, Tuple[int, int]], /) -> None:
    """deep_gemm's constraint on the tile sizes the heuristics may pick: block_m a multiple of x and block_n of y, for
    value = x or (x, y). On SM90 deep_gemm applies only y (its block_m candidates are fixed), and so does hopgemm:
    its block_n is always a multiple of 8, so y in (1, 2, 4, 8) already holds and is accepted; a larger y would
    need a constraint its heuristics do not take, and raises NotImplementedError rather than be ignored."""
    if isinstance(value, int) and not isinstance(value, bool):
        x = y = value
    elif (isinstance(value, tuple) and len(value) == 2 and
          all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        x, y = value
    else:
        raise _C.HopgemmTypeError(f"set_block_size_multiple_of: expected an int or a pair of ints, got {value!r}")
    if x <= 0 or y <= 0:
        raise _C.HopgemmValueError(f"set_block_size_multiple_of: the multiples must be positive, got {value!r}")
    if _BLOCK_N_GRANULE % y != 0:
        raise NotImplementedError(
            f"set_block_size_multiple_of: block_n a multiple of {y} is not a constraint hopgemm's SM90 heuristics "
            f"take (its block_n is always a multiple of {_BLOCK_N_GRANULE}: 1, 2, 4 and 8 hold already)")
