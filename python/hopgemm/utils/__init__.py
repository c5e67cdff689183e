"""deep_gemm.utils equivalents: `math` (integer helpers, UE8M0 rounding and packing, the quantisers, FP4 helpers) and
`layout` (scale-factor layouts, the contiguous-layout alignment), both re-exported here as DeepGEMM does."""
from . import layout, math
from .layout import *  # noqa: F401,F403
from .layout import __all__ as _layout_all
from .math import *  # noqa: F401,F403
from .math import __all__ as _math_all
# Shared with hopgemm/_torch_ops.py (the quantisers' checks and shapes as torch ops see them).
from .math import _SF_SHAPES, _cast_to_fp8, _check_cast_args  # noqa: F401

__all__ = ["layout", "math"] + list(_math_all) + list(_layout_all)
