"""deep_gemm.testing equivalents (the accuracy metric, the timing helpers and the test decorators that DeepGEMM's test
files use), plus element-wise checks against float64 references of dequantised inputs (hopgemm/_accuracy.py),
extended here to the MoE grouped GEMMs (which rows each group computes, which must stay untouched)."""
import functools
import os
import statistics
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

from . import _C
from ._accuracy import (
    FP8_ACC_TOL,
    OUTPUT_EPS,
    _argwhere,
    _as_float64,
    _zeros,
    assert_close_elementwise,
    assert_fp8_gemm_close,
    block_magnitudes,
    dequantize,
    fp8_gemm_inputs,
    fp8_gemm_reference,
)
from ._tensors import is_torch_tensor

__all__ = ["calc_diff", "count_bytes", "bench", "bench_kineto", "FP8_ACC_TOL", "OUTPUT_EPS", "assert_close_elementwise",
           "assert_fp8_gemm_close", "block_magnitudes", "dequantize", "fp8_gemm_inputs", "fp8_gemm_reference",
           "MGroupedLayout", "m_grouped_ids_layout", "m_grouped_psum_layout", "m_grouped_packed_layout",
           "m_grouped_masked_layout", "assert_untouched", "assert_m_grouped_fp8_gemm_close", "k_grouped_offsets",
           "assert_k_grouped_fp8_gemm_close", "magnitude_varied_randn", "m_grouped_ends_layout", "k_grouped_device_ks",
           "assert_zeroed"]


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


def _occupy_gpu(torch):
    """Queues a long kernel (an 8192^3 FP32 product, ~10-20 ms) so that the launches after it are all enqueued before
    the GPU reaches them: no time between timed calls is spent waiting for the host."""
    x = torch.randn((8192, 8192), dtype=torch.float32, device="cuda")
    return x @ x


def bench(fn: Callable[[], Any], num_warmups: int = 5, num_tests: int = 10, high_precision: bool = False, *,
          flush_l2: bool = True) -> float:
    """Median time of `fn()` in seconds over `num_tests` calls, each timed with CUDA events on the current stream
    after a 256 MB buffer is zeroed to flush L2 (flush_l2=False: no flush). high_precision (deep_gemm's parameter):
    a long kernel is queued first, so that no timed call waits for the host to launch it. deep_gemm's bench takes
    the mean of back-to-back calls after one flush; this times each call cold. Needs torch and a GPU."""
    import torch

    flush = _l2_flush_buffer(torch, flush_l2)
    fn()
    for _ in range(num_warmups):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(num_tests)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(num_tests)]
    torch.cuda.synchronize()
    if high_precision:
        _occupy_gpu(torch)
    for start, end in zip(starts, ends):
        if flush is not None:
            flush.zero_()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) / 1e3 for s, e in zip(starts, ends))


class empty_suppress:
    """A context manager that does nothing (bench_kineto's stand-in for suppress_stdout_stderr)."""

    def __enter__(self):
        return self

    def __exit__(self, *_):
        return False


class suppress_stdout_stderr:
    """Silences the process's stdout and stderr until the block ends: sys.stdout / sys.stderr and file descriptors 1
    and 2 (where CUDA libraries and the profiler write from C++)."""

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self._devnull = open(os.devnull, "w")
        self._streams = (sys.stdout, sys.stderr)
        self._fds = [(fd, os.dup(fd)) for fd in (1, 2)]
        for fd, _ in self._fds:
            os.dup2(self._devnull.fileno(), fd)
        sys.stdout = sys.stderr = self._devnull
        return self

    def __exit__(self, *_):
        sys.stdout, sys.stderr = self._streams
        for fd, saved in self._fds:
            os.dup2(saved, fd)
            os.close(saved)
        self._devnull.close()
        return False


def bench_kineto(fn: Callable[[], Any], kernel_names: Union[str, Tuple[str, ...]], num_tests: int = 30,
                 suppress_kineto_output: bool = False, trace_path: Optional[str] = None, flush_l2: bool = True,
                 with_multiple_kernels: bool = False,
                 barrier: Optional[Callable[[], Any]] = None) -> Union[float, Tuple[float, ...]]:
    """deep_gemm.testing.bench_kineto: the mean GPU time in seconds of one launch of the kernels whose names contain
    `kernel_names` (a string, or a tuple of strings: the result has the same form), 0 for a name no kernel has.
    `fn` runs once, then 2 x num_tests times under torch.profiler (the first round warms the profiler up, the second
    is measured), each call after a 256 MB L2 flush (flush_l2=False: none; deep_gemm zeroes 8 GB, which also lets
    the GPU cool between calls) and, with `barrier`, after a ~10 ms sleep kernel and barrier() (multi-process runs
    start together). A name found in more than one kernel is an AssertionError unless with_multiple_kernels (then
    their launches are averaged together). Returns 1 (per name) when $DG_USE_NVIDIA_TOOLS is set: an external
    profiler or sanitizer is attached. suppress_kineto_output silences what the profiler prints; trace_path writes a
    Chrome trace."""
    import torch

    if not isinstance(kernel_names, (str, tuple)):
        raise _C.HopgemmTypeError(f"bench_kineto: kernel_names must be a str or a tuple of str, got "
                                  f"{type(kernel_names).__name__}")
    names = (kernel_names,) if isinstance(kernel_names, str) else kernel_names
    if int(os.environ.get("DG_USE_NVIDIA_TOOLS", 0)):
        return 1 if isinstance(kernel_names, str) else (1,) * len(names)

    flush = _l2_flush_buffer(torch, flush_l2)
    fn()  # compiles (and lets a tuning run print) outside the profile
    with (suppress_stdout_stderr if suppress_kineto_output else empty_suppress)():
        schedule = torch.profiler.schedule(wait=0, warmup=1, active=1, repeat=1)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA], schedule=schedule) as prof:
            for _ in range(2):
                for _ in range(num_tests):
                    if flush is not None:
                        flush.zero_()
                    if barrier is not None:
                        torch.cuda._sleep(int(2e7))
                        barrier()
                    fn()
                torch.cuda.synchronize()
                prof.step()
    if trace_path is not None:
        prof.export_chrome_trace(trace_path)

    events = prof.key_averages()
    times = []
    for name in names:
        matched = [e for e in events if name in e.key]
        assert with_multiple_kernels or len(matched) <= 1, (
            f"bench_kineto: {len(matched)} kernels contain {name!r}: {[e.key for e in matched]}")
        total_us = sum(_device_time_total(e) for e in matched)
        launches = sum(e.count for e in matched)
        times.append(total_us / 1e6 / launches if launches else 0)
    return times[0] if isinstance(kernel_names, str) else tuple(times)


def _device_time_total(event):
    total = getattr(event, "device_time_total", None)  # torch >= 2.4; cuda_time_total before
    return event.cuda_time_total if total is None else total


# ---- deep_gemm.testing's test helpers --------------------------------------------------------------------------

__all__ += ["empty_suppress", "suppress_stdout_stderr", "get_arch_major", "test_filter", "ignore_env",
            "assert_bitwise_equal"]


def get_arch_major() -> int:
    """The compute capability's major number of the current CUDA device (9 on Hopper)."""
    return _C.device_info().arch_major


# The names of the tests test_filter left out, in order (for runners of DeepGEMM's test files).
_filtered: List[str] = []


def test_filter(condition: Callable[[], bool]) -> Callable:
    """Decorator: the test runs when condition() is true at call time; otherwise it prints that it was filtered (and
    its name is recorded) and returns None."""

    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if condition():
                return func(*args, **kwargs)
            _filtered.append(func.__name__)
            print(f"{func.__name__}:\n > Filtered by {condition}\n")
            return None

        return wrapper

    return decorator


test_filter.__test__ = False  # a decorator, not a test, for pytest's collection


def ignore_env(name: str, condition: Callable[[], bool]) -> Callable:
    """Decorator: where condition() is true at call time, the environment variable `name` is removed for the call's
    duration (restored after it, also when it raises)."""

    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if not condition():
                return func(*args, **kwargs)
            saved = os.environ.pop(name, None)
            try:
                return func(*args, **kwargs)
            finally:
                if saved is not None:
                    os.environ[name] = saved

        return wrapper

    return decorator


def assert_bitwise_equal(x: Any, y: Any, label: str = "") -> None:
    """AssertionError unless x and y (torch tensors) have the same shape, dtype and bytes; the message gives the
    number of differing bytes and the first one's element, coordinates and values."""
    import torch

    where = f" ({label})" if label else ""
    assert x.shape == y.shape, f"bitwise mismatch{where}: shapes {tuple(x.shape)} and {tuple(y.shape)}"
    assert x.dtype == y.dtype, f"bitwise mismatch{where}: dtypes {x.dtype} and {y.dtype}"
    x_bytes = x.contiguous().view(-1).view(torch.uint8)
    y_bytes = y.contiguous().view(-1).view(torch.uint8)
    if torch.equal(x_bytes, y_bytes):
        return
    differs = x_bytes != y_bytes
    first = int(differs.nonzero()[0].item())
    element = first // x.element_size()
    coord = []
    for size in reversed(x.shape):
        coord.append(element % size)
        element //= size
    element = first // x.element_size()
    raise AssertionError(
        f"bitwise mismatch{where}: {int(differs.sum().item())} of {differs.numel()} bytes differ; the first is byte "
        f"{first % x.element_size()} of element {element} at {tuple(reversed(coord))}: {x_bytes[first].item()} vs "
        f"{y_bytes[first].item()} ({x.reshape(-1)[element].item()} vs {y.reshape(-1)[element].item()})")


# ---- MoE grouped GEMMs: which rows each group computes, and checks of every row ------------------------------------
# An M-grouped GEMM's A [rows, K] and D [rows, N] (masked: [G, M_max, .] seen as [G * M_max, .]) are cut into
# segments, each computed with one group's B; the rows outside every segment are either left untouched (still the NaN a
# test poisons D with), zeroed (the group-ids layout's whole padding tiles, as DeepGEMM writes them) or, for the
# padding of a group's last aligned block in the group-ids layout, unspecified (they receive A_pad @ B[g]^T:
# include/hopgemm/grouped_gemm.hpp).


@dataclass
class MGroupedLayout:
    """The rows of an M-grouped GEMM: `values` is what the op's layout argument holds (kind "ids": the group of each
    row, -1 for padding; "psum" / "packed": each group's cumulative row end; "masked": masked_m as given, unclamped),
    `segments` the (group, start, end) row ranges computed with B[group], `untouched` the (start, end) row ranges the
    op must not write, `zeroed` those it must write zeros to (the group-ids layout's whole padding blocks; with
    zero_padding_blocks=False they are untouched instead: padding_untouched()). Rows in none are the unspecified
    padding rows of the group-ids layout."""

    kind: str
    num_groups: int
    num_rows: int
    values: List[int]
    segments: List[Tuple[int, int, int]]
    untouched: List[Tuple[int, int]]
    zeroed: List[Tuple[int, int]] = field(default_factory=list)

    def padding_untouched(self) -> "MGroupedLayout":
        """The layout as the op with zero_padding_blocks=False leaves it: the zeroed rows untouched instead."""
        return replace(self, untouched=sorted(self.untouched + self.zeroed), zeroed=[])

    def tensor(self, device: Any = "cuda") -> Any:
        """`values` as the int32 tensor the op takes (torch)."""
        import torch

        return torch.tensor(self.values, dtype=torch.int32, device=device)

    @property
    def valid_rows(self) -> int:
        """Rows computed (the FLOPs of the problem are 2 * valid_rows * N * K)."""
        return sum(end - start for _, start, end in self.segments)


def _align(x: int, alignment: int) -> int:
    return -(-x // alignment) * alignment


def _gaps(num_rows: int, segments: Sequence[Tuple[int, int, int]]) -> List[Tuple[int, int]]:
    """The row ranges of [0, num_rows) outside every segment (segments sorted, disjoint)."""
    out, row = [], 0
    for _, start, end in sorted(segments, key=lambda s: s[1]):
        if start > row:
            out.append((row, start))
        row = max(row, end)
    if num_rows > row:
        out.append((row, num_rows))
    return out


def m_grouped_ids_layout(runs: Sequence[Union[int, Tuple[int, int]]], alignment: int = 128,
                         num_groups: Optional[int] = None) -> MGroupedLayout:
    """The group-ids contiguous layout (DeepGEMM's default, m_indices / grouped_layout [M]) of `runs`, in order: an int
    is the next group's row count (group 0, 1, ...), its rows followed by -1 up to a multiple of `alignment`; a pair
    (id, rows) is `rows` rows (a multiple of `alignment`) all holding `id`, blocks of padding the op computes nothing
    for and writes zeros to (zeroed; untouched with zero_padding_blocks=False, padding_untouched()): -1, or an id
    outside [0, num_groups). num_groups defaults to the number of ints."""
    ids: List[int] = []
    segments, zeroed = [], []
    group = 0
    for run in runs:
        if isinstance(run, tuple):
            block_id, rows = run
            if rows % alignment:
                raise ValueError(f"a skipped run of {rows} rows is not whole blocks of {alignment}")
            zeroed.append((len(ids), len(ids) + rows))
            ids += [block_id] * rows
        else:
            start = len(ids)
            segments.append((group, start, start + run))
            ids += [group] * run + [-1] * (_align(run, alignment) - run)
            group += 1
    num_groups = group if num_groups is None else num_groups
    for run in runs:
        if isinstance(run, tuple) and 0 <= run[0] < num_groups:
            raise ValueError(f"a skipped run holds id {run[0]}, a valid group of {num_groups}")
    return MGroupedLayout("ids", num_groups, len(ids), ids, [s for s in segments if s[1] < s[2]], [], zeroed)


def m_grouped_psum_layout(sizes: Sequence[int], alignment: int = 128, trailing_rows: int = 0) -> MGroupedLayout:
    """DeepGEMM's psum contiguous layout (use_psum_layout=True): group g of sizes[g] rows starts at the previous group's
    end rounded up to `alignment`; values = the unaligned cumulative ends. Rows: up to the last end rounded up to the
    alignment, plus `trailing_rows`; all but the groups' own rows untouched."""
    ends, segments, end = [], [], 0
    for g, size in enumerate(sizes):
        start = _align(end, alignment)
        end = start + size
        ends.append(end)
        if size:
            segments.append((g, start, end))
    num_rows = _align(end, alignment) + trailing_rows
    return MGroupedLayout("psum", len(sizes), num_rows, ends, segments, _gaps(num_rows, segments))


def m_grouped_packed_layout(sizes: Sequence[int], trailing_rows: int = 0) -> MGroupedLayout:
    """The packed contiguous layout (use_packed_layout=True): group g starts exactly where g - 1 ends (tokens sorted by
    expert, no padding); values = the cumulative ends. Rows: the last end plus `trailing_rows` (untouched)."""
    ends, segments, end = [], [], 0
    for g, size in enumerate(sizes):
        if size:
            segments.append((g, end, end + size))
        end += size
        ends.append(end)
    num_rows = end + trailing_rows
    return MGroupedLayout("packed", len(sizes), num_rows, ends, segments, _gaps(num_rows, segments))


def m_grouped_masked_layout(masked_m: Sequence[int], max_m: int) -> MGroupedLayout:
    """The masked layout of A [G, max_m, K] and D [G, max_m, N] seen as G * max_m rows: group g computes its first
    masked_m[g] rows, clamped to [0, max_m]; every other row is untouched."""
    segments = []
    for g, m in enumerate(masked_m):
        rows = min(max(int(m), 0), max_m)
        if rows:
            segments.append((g, g * max_m, g * max_m + rows))
    num_rows = len(masked_m) * max_m
    return MGroupedLayout("masked", len(masked_m), num_rows, [int(m) for m in masked_m], segments,
                          _gaps(num_rows, segments))


def m_grouped_ends_layout(values: Sequence[int], num_rows: int, kind: str = "psum",
                          alignment: int = 128) -> MGroupedLayout:
    """The rows of the psum (kind "psum") or packed ("packed") contiguous layout whose grouped_layout holds `values`
    as the op reads them on the device, any int32 included (include/hopgemm/grouped_gemm.hpp): group g starts at the
    previous group's end rounded up to `alignment` (packed: 1) and clamped to num_rows, and ends at max(start,
    min(values[g], num_rows)); an end below its start makes an empty group. Every other row is untouched. For ends of
    valid sizes this is m_grouped_psum_layout / m_grouped_packed_layout."""
    step = alignment if kind == "psum" else 1
    segments, end = [], 0
    for g, value in enumerate(values):
        start = 0 if g == 0 else min(_align(end, step), num_rows)
        end = max(start, min(int(value), num_rows))
        if end > start:
            segments.append((g, start, end))
    return MGroupedLayout(kind, len(values), num_rows, [int(v) for v in values], segments, _gaps(num_rows, segments))


def _flat_rows(x: Any) -> Any:
    """x [rows, cols] as is, or [G, M, cols] as [G * M, cols] (a view: the group dimension must be dense)."""
    if len(x.shape) == 2:
        return x
    return x.reshape(-1, x.shape[-1])


def _is_nan(x: Any) -> Any:
    if is_torch_tensor(x):
        return x.isnan()
    import numpy as np

    return np.isnan(np.asarray(x).astype(np.float64))


class _DiffSums:
    """calc_diff over several pieces: 1 - 2 sum(x y) / sum(x^2 + y^2) accumulated piece by piece."""

    def __init__(self):
        self.xy, self.squares = 0.0, 0.0

    def add(self, out: Any, ref: Any) -> None:
        x = _as_float64(out)
        self.xy += float((x * ref).sum())
        self.squares += float((x * x + ref * ref).sum())

    def value(self) -> float:
        return 0.0 if self.squares == 0 else 1 - 2 * self.xy / self.squares


def assert_untouched(x: Any, rows: Sequence[Tuple[int, int]], name: str = "d") -> None:
    """Every element of the row ranges [(start, end)] of x ([rows, N], or [G, M, N] seen as [G * M, N]) still NaN, as
    a NaN-poisoned output is where an op wrote nothing. The AssertionError names the range and the first row written."""
    flat = _flat_rows(x)
    for start, end in rows:
        if end <= start:
            continue
        written = (~_is_nan(flat[start:end])).any(-1)
        if written.any():
            first = start + int(_argwhere(written)[0][0])
            raise AssertionError(f"{name}: rows {start}-{end - 1} must be left untouched, but {int(written.sum())} "
                                 f"of them were written, the first at row {first}")


def assert_zeroed(x: Any, rows: Sequence[Tuple[int, int]], name: str = "d") -> None:
    """Every element of the row ranges [(start, end)] of x ([rows, N], or [G, M, N] seen as [G * M, N]) exactly 0 (the
    group-ids layout's padding blocks). The AssertionError names the range and the first row that is not."""
    flat = _flat_rows(x)
    for start, end in rows:
        if end <= start:
            continue
        wrong = (flat[start:end] != 0).any(-1)
        if wrong.any():
            first = start + int(_argwhere(wrong)[0][0])
            raise AssertionError(f"{name}: rows {start}-{end - 1} (whole padding blocks) must be zeros, but "
                                 f"{int(wrong.sum())} of them are not, the first at row {first}")


def _check_group_diffs(groups: dict, diff_tol: Optional[float], name: str) -> None:
    """Each group's calc_diff ({group: _DiffSums}) below diff_tol (None: no bar); the AssertionError names the worst."""
    if diff_tol is None:
        return
    diffs = {g: sums.value() for g, sums in groups.items()}
    bad = {g: diff for g, diff in diffs.items() if not diff < diff_tol}
    if bad:
        worst = max(bad, key=lambda g: bad[g] if bad[g] == bad[g] else float("inf"))
        raise AssertionError(f"{name}: calc_diff of {len(bad)} group(s) at or above {diff_tol:.3g}, worst group {worst}: "
                             f"{bad[worst]:.3g}")


def assert_m_grouped_fp8_gemm_close(d: Any, a: Any, sfa: Any, b: Any, sfb: Any, layout: MGroupedLayout,
                                    acc_tol: float = FP8_ACC_TOL, name: str = "d",
                                    diff_tol: Optional[float] = None) -> float:
    """An M-grouped FP8 GEMM's output (m_grouped_fp8_gemm_{nt,nn}_contiguous, m_grouped_fp8_gemm_nt_masked) against
    the float64 reference of the dequantised inputs, segment by segment of `layout`: each segment's rows of d within
    assert_fp8_gemm_close's element-wise bound of A[rows] (sfa per 1 x 128) @ B[group]^T (sfb[group] per 128 x 128),
    every untouched row still NaN, every zeroed row exactly 0, and with diff_tol each group's calc_diff (over its
    rows) below it. d, a and sfa are
    [rows, .] or, masked, [G, M_max, .] (row-major sfa: pass the scales' values, whatever layout the op was given);
    b [G, N, K]. Returns calc_diff over all computed rows."""
    d2, a2, sfa2 = _flat_rows(d), _flat_rows(a), _flat_rows(sfa)
    if d2.shape[0] != layout.num_rows or a2.shape[0] != layout.num_rows:
        raise ValueError(f"{name}: the layout has {layout.num_rows} rows, d {d2.shape[0]} and a {a2.shape[0]}")
    sums, groups = _DiffSums(), {}
    for group, start, end in layout.segments:
        rows = slice(start, end)
        ref = assert_fp8_gemm_close(d2[rows], a2[rows], sfa2[rows], b[group], sfb[group], 128, acc_tol=acc_tol,
                                    name=f"{name} rows {start}-{end - 1} (group {group})")
        sums.add(d2[rows], ref)
        groups.setdefault(group, _DiffSums()).add(d2[rows], ref)
    assert_untouched(d2, layout.untouched, name)
    assert_zeroed(d2, layout.zeroed, name)
    _check_group_diffs(groups, diff_tol, name)
    return sums.value()


def k_grouped_offsets(ks: Sequence[int]) -> List[int]:
    """Each group's first K index in the k-grouped flat buffers: 0, k_0, k_0 + k_1, ..."""
    out, total = [], 0
    for k in ks:
        out.append(total)
        total += int(k)
    return out


def k_grouped_device_ks(values: Sequence[int], sum_k: int) -> List[int]:
    """The K each group of k_grouped_fp8_gemm_nt_contiguous computes with when its ks_tensor holds `values` (any int32,
    whatever the host's ks say) and the host's ks sum to sum_k: each value rounded down to a multiple of 128, at least
    0 and at most what sum_k leaves after the groups before it (include/hopgemm/grouped_gemm.hpp). Group g then reads
    A_g and B_g at the offsets of these Ks (k_grouped_offsets)."""
    out, used = [], 0
    for value in values:
        k = min(max(int(value), 0) // 128 * 128, sum_k - used)
        out.append(k)
        used += k
    return out


def assert_k_grouped_fp8_gemm_close(d: Any, a: Any, sfa: Any, b: Any, sfb: Any, ks: Sequence[int],
                                    c: Optional[Any] = None, rows: Optional[Any] = None,
                                    acc_tol: float = FP8_ACC_TOL, name: str = "d",
                                    diff_tol: Optional[float] = None) -> float:
    """k_grouped_fp8_gemm_nt_contiguous's output against the float64 reference: d[g] [M, N] = C[g] + A_g @ B_g^T with
    A_g the K-major [M, ks[g]] matrix at a[off_g * M : (off_g + ks[g]) * M] of the flat FP8 buffer a (B_g likewise with
    N), sfa [M, sum(ks) / 128] and sfb [N, sum(ks) / 128] per 1 x 128 in any strides (MN-major or row-major). Each
    non-empty group within assert_fp8_gemm_close's element-wise bound; an empty group (ks[g] == 0) exactly C[g] (zeros
    without C). c: the C the op was given, as it was before the call (where it aliased d, a copy), or None. rows: check
    only these rows of every d[g] (an index or a slice: for problems too large for a full float64 reference). With
    diff_tol, each non-empty group's calc_diff below it. Returns calc_diff over the checked elements of the non-empty
    groups."""
    m, n = d.shape[1], d.shape[2]
    pick = slice(None) if rows is None else rows
    sums, groups = _DiffSums(), {}
    for g, (k, off) in enumerate(zip(ks, k_grouped_offsets(ks))):
        out = d[g][pick]
        c_g = None if c is None else c[g][pick]
        if k == 0:
            expected = _zeros(_as_float64(out), tuple(out.shape)) if c_g is None else _as_float64(c_g)
            assert_close_elementwise(out, expected, 0.0, name=f"{name}[{g}] (empty group: must be C)")
            continue
        a_g = a[off * m:(off + k) * m].reshape(m, k)[pick]
        b_g = b[off * n:(off + k) * n].reshape(n, k)
        blocks = slice(off // 128, (off + k) // 128)
        ref = assert_fp8_gemm_close(out, a_g, sfa[pick][:, blocks], b_g, sfb[:, blocks], 1, c=c_g, acc_tol=acc_tol,
                                    name=f"{name}[{g}] (k = {k})")
        sums.add(out, ref)
        groups.setdefault(g, _DiffSums()).add(out, ref)
    _check_group_diffs(groups, diff_tol, name)
    return sums.value()


def magnitude_varied_randn(rows: int, cols: int, row_block: int, col_block: int, seed: int = 0,
                           generator: Any = None, device: Any = "cuda") -> Any:
    """torch float32 [rows, cols]: normal values times block_magnitudes per run of row_block rows and per run of
    col_block columns (each scale block of an FP8 operand cast per those blocks differs from its neighbours, so a scale,
    tile or group taken from the wrong place changes the result). Needs torch."""
    import torch

    row = torch.tensor(block_magnitudes(rows, row_block, seed), device=device)
    col = torch.tensor(block_magnitudes(cols, col_block, seed + 1), device=device)
    return torch.randn(rows, cols, device=device, generator=generator) * row[:, None] * col[None, :]
