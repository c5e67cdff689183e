"""deep_gemm.utils.layout: the scale-factor layout helpers and the contiguous-layout alignment (hopgemm/_layout.py)."""
from .._C import set_mk_alignment_for_contiguous_layout
from .._layout import *  # noqa: F401,F403
from .._layout import __all__ as _layout_all

__all__ = list(_layout_all) + ["set_mk_alignment_for_contiguous_layout"]
