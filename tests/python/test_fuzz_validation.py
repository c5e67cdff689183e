"""A seeded fuzzer of the Python API's argument handling (issue 29, item 4): random calls to every public op (the dense
FP8 GEMMs, the M-grouped GEMMs in each layout, masked, K-grouped, the scale-factor layout ops and the quantisers) with
stand-in torch tensors (fake_torch.py: any shape, strides, dtype, device and address, never dereferenced), host
arrays, None and non-tensors, random recipes, ks lists, expected_m, gran_k and streams. Each case starts from a valid
call of random dimensions and changes up to four things. A call may only raise ValueError, TypeError or RuntimeError
(NotImplementedError is one): any other exception fails the case, a crash fails the process. Nothing can reach a
kernel: the JIT policy is error_on_miss over an empty cache and CUDA_VISIBLE_DEVICES="" hides any GPU.

HOPGEMM_FUZZ_CASES (default 3000, a few seconds) and HOPGEMM_FUZZ_SEED (default 29) scale and reseed it."""
import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))

FUZZER = r'''
import random, sys, traceback
import fake_torch
torch = fake_torch.install()
import numpy
import hopgemm

T = torch.Tensor
FP8, BF16, F32, I32 = torch.float8_e4m3fn, torch.bfloat16, torch.float32, torch.int32
DTYPES = [getattr(torch, name) for name in fake_torch.DTYPES]
HOSTILE = [-1, -2, 0, 1, 3, 15, 16, 17, 127, 129, 2**31 - 1, 2**31, 2**32, 2**40, 2**62, 2**63 - 1, -2**63]
ALLOWED = (ValueError, TypeError, RuntimeError)


def ceil_div(a, b):
    return (a + b - 1) // b


class Case:
    def __init__(self, rng):
        self.rng = rng
        self.region = 0

    def dim(self, multiple=1, top=4096):
        return 0 if self.rng.random() < 0.08 else self.rng.randint(1, top // multiple) * multiple

    def t(self, shape, dtype, strides=None):
        self.region += 1
        return T(shape, strides, dtype=dtype, ptr=(1 << 40) + (self.region << 36))


def valid_dense(c):
    m, k, n = c.dim(), c.dim(16), c.dim(8)
    one_d_one_d = c.rng.random() < 0.5
    sf_k = ceil_div(k, 128)
    a = (c.t((m, k), FP8), c.t((m, sf_k), F32))
    b = (c.t((n, k), FP8), c.t((n, sf_k) if one_d_one_d else (ceil_div(n, 128), sf_k), F32))
    d = c.t((m, n), F32 if one_d_one_d else BF16)
    kwargs = {"recipe": (1, 1, 128) if one_d_one_d else (1, 128, 128)} if c.rng.random() < 0.5 else {}
    if one_d_one_d and c.rng.random() < 0.5:
        kwargs["c"] = d
    return [a, b, d], kwargs


def valid_m_grouped(c):
    g, k, n = c.rng.randint(1, 16), c.dim(128, 2048), c.dim(128, 2048)
    psum = c.rng.random() < 0.5
    m_sum = c.dim(1 if psum else 128)
    sf_k = ceil_div(k, 128)
    a = (c.t((m_sum, k), FP8), c.t((m_sum, sf_k), F32))
    b = (c.t((g, n, k), FP8), c.t((g, ceil_div(n, 128), sf_k), F32))
    return [a, b, c.t((m_sum, n), BF16), c.t((g,) if psum else (m_sum,), I32)], {"use_psum_layout": psum}


def valid_masked(c):
    g, m_max, k, n = c.rng.randint(1, 16), c.dim(1, 1024), c.dim(128, 2048), c.dim(128, 2048)
    sf_k = ceil_div(k, 128)
    a = (c.t((g, m_max, k), FP8), c.t((g, m_max, sf_k), F32))
    b = (c.t((g, n, k), FP8), c.t((g, ceil_div(n, 128), sf_k), F32))
    return [a, b, c.t((g, m_max, n), BF16), c.t((g,), I32), c.dim()], {}


def valid_k_grouped(c):
    g, m, n = c.rng.randint(1, 12), c.dim(1, 1024), c.dim(4, 1024)
    ks = [0 if c.rng.random() < 0.2 else 128 * c.rng.randint(1, 8) for _ in range(g)]
    sf_k = sum(ks) // 128
    a = (c.t((sum(ks) * m,), FP8), c.t((m, sf_k), F32, (1, (m + 3) // 4 * 4)))
    b = (c.t((sum(ks) * n,), FP8), c.t((n, sf_k), F32, (1, (n + 3) // 4 * 4)))
    return [a, b, c.t((g, m, n), F32)], {"ks": ks, "ks_tensor": c.t((g,), I32)}


def valid_sf(c):
    mn, sf_k = c.dim(1, 2048), c.dim(1, 64)
    return [c.t((mn, sf_k), F32)], {}


def valid_k_grouped_packed(c):
    g, mn = c.rng.randint(1, 64), c.dim(1, 2048)
    ks = [0 if c.rng.random() < 0.15 else c.rng.randint(1, 32) * 128 for _ in range(g)]
    return [c.t((sum(ceil_div(k, 128) for k in ks), mn), F32), c.t((g,), I32), ks, 128, 128], {}


def valid_transform(c):
    mn, k = c.dim(1, 2048), c.dim(128, 4096)
    gran_mn = c.rng.choice([1, 128])
    return [c.t((ceil_div(mn, gran_mn), ceil_div(k, 128)), F32), mn, k, (1, gran_mn, 128) if gran_mn == 1 else
            (1, 128, 128)], {"is_sfa": gran_mn == 1}


def valid_quantize(kind):
    def make(c):
        gran = c.rng.choice([128, 128, 64, 32])
        m = c.dim(gran) if kind == 2 else c.dim()
        n = c.dim(16)
        sf = [(m, ceil_div(n, gran)), (ceil_div(m, gran), ceil_div(n, gran)), (m // gran, n)][kind]
        return [c.t((m, n), c.rng.choice([BF16, F32])), c.t((m, n), FP8), c.t(sf, F32)], {
            "use_ue8m0": c.rng.random() < 0.5, "gran_k": gran}
    return make


OPS = [
    ("fp8_gemm_nt", valid_dense), ("fp8_gemm_nn", valid_dense), ("fp8_gemm_tn", valid_dense),
    ("fp8_gemm_tt", valid_dense),
    ("m_grouped_fp8_gemm_nt_contiguous", valid_m_grouped), ("m_grouped_fp8_gemm_nn_contiguous", valid_m_grouped),
    ("m_grouped_fp8_gemm_nt_masked", valid_masked),
    ("k_grouped_fp8_gemm_nt_contiguous", valid_k_grouped), ("k_grouped_fp8_gemm_tn_contiguous", valid_k_grouped),
    ("get_mn_major_tma_aligned_tensor", valid_sf), ("get_mn_major_tma_aligned_packed_ue8m0_tensor", valid_sf),
    ("get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor", valid_k_grouped_packed),
    ("transform_sf_into_required_layout", valid_transform),
    ("per_token_cast_to_fp8", valid_quantize(0)), ("per_block_cast_to_fp8", valid_quantize(1)),
    ("per_channel_cast_to_fp8", valid_quantize(2)),
]


def random_tensor(c):
    rank = c.rng.randint(0, 5)
    shape = tuple(c.rng.choice(HOSTILE) if c.rng.random() < 0.3 else c.rng.randint(0, 600) for _ in range(rank))
    strides = tuple(c.rng.choice(HOSTILE) if c.rng.random() < 0.3 else c.rng.randint(0, 4096) for _ in range(rank))
    device = c.rng.choice(["cuda:0", "cuda:0", "cuda:1", "cpu", "meta"])
    return T(shape, strides, dtype=c.rng.choice(DTYPES), device=device, ptr=c.rng.choice([0, 1, 16, 2**40, 2**64 - 16]))


def mutate_tensor(c, x):
    if not isinstance(x, T):  # already not a tensor
        return random_tensor(c)
    what = c.rng.randrange(8)
    shape, strides = list(x.shape), list(x.stride())
    if what == 0:
        return T(shape, strides, dtype=c.rng.choice(DTYPES), device=x.device, ptr=x.data_ptr())
    if what == 1 and shape:
        i = c.rng.randrange(len(shape))
        shape[i] = c.rng.choice(HOSTILE) if c.rng.random() < 0.5 else shape[i] + c.rng.randint(-2, 2)
    if what == 2 and strides:
        i = c.rng.randrange(len(strides))
        strides[i] = c.rng.choice(HOSTILE) if c.rng.random() < 0.5 else strides[i] * c.rng.randint(-1, 3)
    if what == 3:
        return T(shape, strides, dtype=x.dtype, device=x.device, ptr=c.rng.choice([0, x.data_ptr() + 1,
                                                                                    x.data_ptr() + 8, 2**64 - 16]))
    if what == 4:
        return T(shape, strides, dtype=x.dtype, device=c.rng.choice(["cpu", "cuda:1", "cuda:7", "meta"]),
                 ptr=x.data_ptr())
    if what == 5:  # one dimension more or fewer
        if shape and c.rng.random() < 0.5:
            shape, strides = shape[1:], strides[1:]
        else:
            shape, strides = [c.rng.randint(1, 4)] + shape, [shape[0] * strides[0] if shape else 1] + strides
    # torch's extents and strides are int64: keep what the arithmetic above made inside it.
    shape = [min(max(v, -2**63), 2**63 - 1) for v in shape]
    strides = [min(max(v, -2**63), 2**63 - 1) for v in strides]
    if what == 6:
        return random_tensor(c)
    if what == 7:
        return c.rng.choice([None, 3, "tensor", 1.5, numpy.zeros((4, 4), numpy.float32), numpy.zeros(3, numpy.int8),
                             object()])
    return T(shape, strides, dtype=x.dtype, device=x.device, ptr=x.data_ptr())


def mutate_value(c, v):
    if isinstance(v, T):
        return mutate_tensor(c, v)
    if isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], T):
        i = c.rng.randrange(3)
        if i == 2:
            return c.rng.choice([(v[0],), v + (v[1],), v[0], None, [v[0], v[1]]])
        return tuple(mutate_tensor(c, x) if j == i else x for j, x in enumerate(v))
    if isinstance(v, list):
        return c.rng.choice([v[:-1], v + [c.rng.choice(HOSTILE)], [c.rng.choice(HOSTILE)] * len(v), [], None,
                             [str(x) for x in v]])
    if isinstance(v, tuple):
        return c.rng.choice([(2, 2, 2), (1, 128), (), (1, 1, 128, 1), ("1", 1, 128), (-1, 1, 128), (1, 2**40, 128)])
    if isinstance(v, bool):
        return c.rng.choice([not v, None, 2, "yes"])
    if isinstance(v, int):
        return c.rng.choice(HOSTILE + [None, 1.5, "3"])
    return v


OPTIONS = {
    "recipe": lambda c: c.rng.choice([(1, 128, 128), (1, 1, 128), (2, 2, 2), (1, 128), (), None, (128, 128, 128)]),
    "recipe_a": lambda c: c.rng.choice([(1, 128), (1, 1), (128, 128), (0, 0), None]),
    "recipe_b": lambda c: c.rng.choice([(1, 128), (128, 128), (3, 3), None]),
    "compiled_dims": lambda c: c.rng.choice(["nk", "mnk", "", "xyz", None]),
    "stream": lambda c: c.rng.choice([None, 0, -1, 2**63 - 1, "s", object()]),
    "expected_m": lambda c: c.rng.choice(HOSTILE + [None]),
    "disable_ue8m0_cast": lambda c: c.rng.choice([True, False, None]),
}


def run_case(seed, index, counts):
    rng = random.Random(seed * 1000003 + index)
    c = Case(rng)
    name, make = OPS[rng.randrange(len(OPS))]
    args, kwargs = make(c)
    changes = []
    if rng.random() < 0.1:
        args = [random_tensor(c) if isinstance(x, T) else x for x in args]
        changes.append("every tensor random")
    for _ in range(rng.randint(0, 4)):
        if rng.random() < 0.75 or not (args or kwargs):
            if args:
                i = rng.randrange(len(args))
                args[i] = mutate_value(c, args[i])
                changes.append(f"argument {i}")
        elif kwargs and rng.random() < 0.5:
            key = rng.choice(sorted(kwargs))
            kwargs[key] = mutate_value(c, kwargs[key])
            changes.append(f"{key}")
        else:
            key = rng.choice(sorted(OPTIONS))
            if name.startswith(("get_", "per_", "transform")) and key not in ("stream",):
                continue
            kwargs[key] = OPTIONS[key](c)
            changes.append(f"{key}={kwargs[key]!r}")
    what = f"seed {seed} case {index}: {name}, changes: {', '.join(changes) or 'none'}"
    try:
        getattr(hopgemm, name)(*args, **kwargs)
        counts["returned"] += 1
    except ALLOWED as e:
        base = next(k for k in (NotImplementedError, ValueError, TypeError, RuntimeError) if isinstance(e, k))
        counts[base.__name__] += 1
        if not str(e):
            return what + ": an empty message from " + type(e).__name__
    except BaseException as e:  # noqa: BLE001 - the point: nothing else may come out
        return what + ": raised " + type(e).__name__ + ": " + str(e) + "\n" + traceback.format_exc()
    return None


def main():
    seed, cases = int(sys.argv[1]), int(sys.argv[2])
    counts = {"returned": 0, "ValueError": 0, "TypeError": 0, "RuntimeError": 0, "NotImplementedError": 0}
    failures = []
    for index in range(cases):
        problem = run_case(seed, index, counts)
        if problem:
            failures.append(problem)
    print(f"python fuzz: seed {seed}, {cases} cases: " + ", ".join(f"{v} {k}" for k, v in counts.items()) +
          f", {len(failures)} failures")
    for problem in failures[:10]:
        print(problem)
    sys.exit(1 if failures else 0)


main()
'''


def test_every_public_op_raises_only_value_type_or_runtime_errors(tmp_path):
    seed = int(os.environ.get("HOPGEMM_FUZZ_SEED", "29"))
    cases = int(os.environ.get("HOPGEMM_FUZZ_CASES", "3000"))
    env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""), CUDA_VISIBLE_DEVICES="",
               HOPGEMM_JIT_POLICY="error_on_miss", HOPGEMM_CACHE_DIR=str(tmp_path / "cache"))
    script = tmp_path / "fuzz.py"
    script.write_text(textwrap.dedent(FUZZER))
    result = subprocess.run([sys.executable, str(script), str(seed), str(cases)], capture_output=True, text=True,
                            env=env, timeout=600)
    print(result.stdout[:2000])
    assert result.returncode == 0, (f"exit status {result.returncode} (a negative one is a signal)\n" +
                                    result.stdout[-20000:] + result.stderr[-5000:])
    assert "python fuzz:" in result.stdout
    # Nothing was compiled or cached.
    assert not (tmp_path / "cache" / "kernels").exists() or not any((tmp_path / "cache" / "kernels").iterdir())
