"""deep_gemm.testing equivalents (the accuracy metric and timing helpers used by tests and benchmarks), plus
element-wise checks against float64 references of dequantised inputs (hopgemm/_accuracy.py)."""
import os
import statistics
from typing import Any, Callable, Optional, Sequence, Tuple, Union

from ._accuracy import (
    FP8_ACC_TOL,
    OUTPUT_EPS,
    assert_close_elementwise,
    assert_fp8_gemm_close,
    block_magnitudes,
    dequantize,
    fp8_gemm_inputs,
    fp8_gemm_reference,
)
from ._tensors import is_torch_tensor

__all__ = ["calc_diff", "count_bytes", "bench", "bench_kineto", "FP8_ACC_TOL", "OUTPUT_EPS", "assert_close_elementwise",
           "assert_fp8_gemm_close", "block_magnitudes", "dequantize", "fp8_gemm_inputs", "fp8_gemm_reference"]


def calc_diff(x: Any, y: Any) -> Any:
    """DeepGEMM's accuracy metric, in float64: 1 - 2 * sum(x * y) / sum(x * x + y * y), and 0.0 when the
    denominator is 0 (both all zeros). 0 for identical inputs, ~1e-3 for FP8-level error. Takes torch
    tensors (returns a 0-d float64 tensor, like deep_gemm) or anything NumPy accepts (returns a float)."""
    if is_torch_tensor(x) or is_torch_tensor(y):
        x, y = x.double(), y.double()
    else:
        import numpy as np

        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    denominator = (x * x + y * y).sum()
    if denominator == 0:
        return 0.0
    similarity = 2 * (x * y).sum() / denominator
    return 1 - similarity


def count_bytes(*tensors: Any) -> int:
    """Total bytes of the tensors (each read or written once); None is skipped, tuples and lists are
    flattened."""
    total = 0
    for t in tensors:
        if isinstance(t, (tuple, list)):
            total += count_bytes(*t)
        elif t is None:
            continue
        elif hasattr(t, "element_size"):
            total += t.numel() * t.element_size()
        else:
            total += int(t.size) * t.dtype.itemsize
    return total


def _l2_flush_buffer(torch, flush_l2):
    # 256 MB of int32: several times any Hopper L2 (50 MB), so every timed call starts cold.
    return torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda") if flush_l2 else None


def bench(fn: Callable[[], Any], num_warmups: int = 5, num_tests: int = 30, flush_l2: bool = True) -> float:
    """Median time of `fn()` in seconds, measured with CUDA events on the current stream; before each timed
    call a 256 MB buffer is zeroed to flush L2. Needs torch and a GPU."""
    import torch

    flush = _l2_flush_buffer(torch, flush_l2)
    fn()
    for _ in range(num_warmups):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(num_tests)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(num_tests)]
    torch.cuda.synchronize()
    for start, end in zip(starts, ends):
        if flush is not None:
            flush.zero_()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) / 1e3 for s, e in zip(starts, ends))


def bench_kineto(fn: Callable[[], Any], kernel_names: Union[str, Sequence[str]], num_tests: int = 30,
                 suppress_kineto_output: bool = False, trace_path: Optional[str] = None, flush_l2: bool = True,
                 with_multiple_kernels: bool = False) -> Union[float, Tuple[float, ...]]:
    """deep_gemm.testing.bench_kineto: mean GPU time in seconds of the kernels whose names contain each of
    `kernel_names` (a string or a tuple of strings; the result has the same form), profiled with
    torch.profiler over `num_tests` calls, each after a 256 MB L2 flush. Returns 1 when
    DG_USE_NVIDIA_TOOLS is set (an external profiler is running)."""
    import torch

    if int(os.environ.get("DG_USE_NVIDIA_TOOLS", 0)):
        return 1
    names = (kernel_names,) if isinstance(kernel_names, str) else tuple(kernel_names)
    flush = _l2_flush_buffer(torch, flush_l2)
    fn()
    torch.cuda.synchronize()
    activities = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as prof:
        for _ in range(num_tests):
            if flush is not None:
                flush.zero_()
            fn()
        torch.cuda.synchronize()
    if trace_path is not None:
        prof.export_chrome_trace(trace_path)
    if not suppress_kineto_output:
        print(prof.key_averages().table(sort_by="cuda_time_total", max_name_column_width=100))

    times = []
    for name in names:
        total_us, matched = 0.0, 0
        for event in prof.key_averages():
            if name in event.key:
                device_total = getattr(event, "device_time_total", None)
                if device_total is None:
                    device_total = event.cuda_time_total
                total_us += device_total
                matched += 1
        if matched == 0:
            raise ValueError(f"bench_kineto: no kernel name contains {name!r}")
        if matched > 1 and not with_multiple_kernels:
            raise ValueError(f"bench_kineto: {matched} kernels contain {name!r}; pass with_multiple_kernels=True")
        times.append(total_us / 1e6 / num_tests)
    return times[0] if isinstance(kernel_names, str) else tuple(times)
