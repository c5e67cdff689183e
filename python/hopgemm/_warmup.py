"""Warm-up: every kernel a model or a list of GEMMs can select, compiled ahead of time (no GPU needed)."""
import json as _json
import os as _os
import tempfile as _tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _C

Shape = Union[str, Sequence[Optional[Union[int, str]]]]


def _shape_text(shape: Shape) -> str:
    """'[OP:]MxNxK' as given, or (m, n, k) / (op, m, n, k) / (op, groups, m, n, k) with None for the token dimension."""
    if isinstance(shape, str):
        return shape
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"warmup: a shape is a string or a tuple, got {shape!r} (shapes is a list of them)")
    items = list(shape)
    op = items.pop(0) if items and isinstance(items[0], str) else "gemm"  # an unknown op: the C++ parser says so
    dims = "x".join("*" if d is None else str(int(d)) for d in items)
    return f"{op}:{dims}"


def warmup(model: Union[None, str, "_os.PathLike[str]", Dict[str, Any]] = None,
           shapes: Union[Shape, Sequence[Shape]] = (), *, tp: int = 1, ep: int = 1, masked_moe: bool = True,
           max_tokens: int = 8192, scales: str = "mn", num_sms: int = 0, jobs: int = 0, progress: bool = True,
           utility_kernels: bool = True, dry_run: bool = False, archive: Union[None, str, "_os.PathLike[str]"] = None
           ) -> Union["_C.PrecompileReport", Tuple[int, int, float]]:
    """Compile every kernel a model or a list of GEMMs can select, for every token count up to ``max_tokens``.

    After it, ``set_jit_policy("error_on_miss")`` serves the workload without compiling; where a GPU is present the
    GEMM kernels are also loaded into this process, so that CUDA-graph capture finds them. Needs no GPU; the
    heuristics plan for ``num_sms`` SMs (0: the current GPU's, or 132 without one).

    model: an embedded model (``hopgemm._C.model_presets()``: "deepseek-v3", "qwen3-235b-a22b"), the path of a
        Hugging Face ``config.json``, or such a config as a dict. Its attention and dense/shared-expert MLP GEMMs and
        its experts' grouped GEMMs (contiguous, and masked unless ``masked_moe=False``) on one rank of ``tp`` x ``ep``.
    shapes: GEMMs of your own: "[OP:]MxNxK" (grouped ops: "OP:GxMxNxK") with "*" for the token dimension, or tuples
        ``(m, n, k)``, ``(op, m, n, k)``, ``(op, groups, m, n, k)`` with None there. OP: gemm (1D2D, BF16 D), wgrad
        (1D1D, FP32 D += A B^T; tokens are K), m-grouped, m-grouped-psum, masked, k-grouped (tokens are K).
    scales: the per-token scales your calls pass: "mn" (MN-major TMA-aligned, DeepGEMM's), "row" (as the quantisers
        return them) or "both".
    progress: draw a progress bar on stderr. utility_kernels: also the 15 layout and quantisation kernels.
    dry_run: only plan; returns ``(distinct problems, distinct kernels, seconds)``.
    archive: also write the kernels' cache entries into this tar file (``hopgemm.import_cache_archive`` on the
        target machine, or ``hopgemm cache import``).

    Returns a PrecompileReport (num_kernels, num_compiled, num_cached, num_stored, num_loaded, seconds, errors,
    compiler).
    """
    model_name, model_is_file, temporary = "", False, None
    if isinstance(model, dict):
        with _tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            _json.dump(model, f)
        model_name, model_is_file, temporary = f.name, True, f.name
    elif model is not None:
        model_name = _os.fspath(model)
        model_is_file = _os.path.exists(model_name) or model_name.endswith(".json")
    if isinstance(shapes, str):
        shapes = [shapes]
    texts = [_shape_text(s) for s in shapes]
    if not model_name and not texts:
        raise ValueError("warmup: give a model, shapes, or both")
    try:
        return _C.warmup(model_name, model_is_file, texts, int(tp), int(ep), bool(masked_moe), int(max_tokens),
                         str(scales), int(num_sms or 0), int(jobs), bool(progress), bool(utility_kernels),
                         bool(dry_run), _os.fspath(archive) if archive is not None else "")
    finally:
        if temporary is not None:
            _os.unlink(temporary)


def import_cache_archive(path: Union[str, "_os.PathLike[str]"]) -> Tuple[int, int, List[str]]:
    """Add the kernels of a cache archive (``warmup(archive=...)``, ``hopgemm cache export``) to the kernel cache,
    each checked first. Returns (added, already present, [skipped entry: why, ...])."""
    return _C.import_cache_archive(_os.fspath(path))
