"""Registration of hopgemm's torch.library ops (hopgemm/_torch_ops.py) without a GPU.

`import hopgemm` never imports torch; the ops are registered once both are imported, in either order. Most
tests use a stand-in `torch` package written to a temporary directory (a real package, so the post-import
hook runs through the normal import machinery) that records torch.library.custom_op calls; the last ones use
the real torch where it is installed (CPU is enough: only schemas and fake implementations are exercised)."""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import requires_torch

HERE = os.path.dirname(os.path.abspath(__file__))

GEMMS = ["fp8_gemm_nt", "fp8_gemm_nn", "fp8_gemm_tn", "fp8_gemm_tt"]
# fp8_gemm_nt_skip_head_mid: the dense GEMM's parameters with head_splits in c's place, recipe only.
HEAD_SPLIT_GEMMS = {"fp8_gemm_nt_skip_head_mid": ["a", "sfa", "b", "sfb", "d", "head_splits", "recipe"]}
# einsum: DeepGEMM's expression and tensors (its use_cublaslt=True is the public function's, not the op's).
EINSUM_OPS = {"einsum": ["expr", "a", "b", "d", "c"], "fp8_einsum": ["expr", "a", "sfa", "b", "sfb", "d", "c", "recipe"]}
# tf32_hc_prenorm_gemm: writes d and sqr_sum.
HC_OPS = {"tf32_hc_prenorm_gemm": ["a", "b", "d", "sqr_sum", "num_splits"]}
BF16_GEMMS = ["bf16_gemm_nt", "bf16_gemm_nn", "bf16_gemm_tn", "bf16_gemm_tt"]
# The grouped GEMM ops and their parameters after (a, sfa, b, sfb, d).
GROUPED_GEMMS = {
    **dict.fromkeys(["m_grouped_fp8_gemm_nt_contiguous", "m_grouped_fp8_gemm_nn_contiguous"], [
        "grouped_layout", "recipe", "recipe_a", "recipe_b", "use_psum_layout", "expected_m_for_psum_layout",
        "m_indices", "use_packed_layout", "zero_padding_blocks"]),
    "m_grouped_fp8_gemm_nt_masked": ["masked_m", "expected_m", "recipe", "recipe_a", "recipe_b"],
    **dict.fromkeys(["k_grouped_fp8_gemm_nt_contiguous", "k_grouped_fp8_gemm_tn_contiguous"], [
        "ks", "ks_tensor", "c", "recipe", "use_psum_layout"]),
}
# The BF16 M-grouped ops: the FP8 ones' parameters without scales and recipes, after (a, b, d).
BF16_GROUPED_GEMMS = {
    **dict.fromkeys(["m_grouped_bf16_gemm_nt_contiguous", "m_grouped_bf16_gemm_nn_contiguous"], [
        "grouped_layout", "use_psum_layout", "expected_m_for_psum_layout", "m_indices", "use_packed_layout",
        "zero_padding_blocks"]),
    "m_grouped_bf16_gemm_nt_masked": ["masked_m", "expected_m"],
    "k_grouped_bf16_gemm_tn_contiguous": ["ks", "ks_tensor", "c", "use_psum_layout"],
}
CASTS = ["per_token_cast_to_fp8", "per_block_cast_to_fp8", "per_channel_cast_to_fp8"]
# The indexer's ops and their parameters.
INDEXER = {
    "fp8_mqa_logits": ["q", "kv", "kv_sf", "weights", "cu_seq_len_k_start", "cu_seq_len_k_end", "clean_logits",
                       "max_seqlen_k", "logits_dtype"],
    "get_paged_mqa_logits_metadata": ["context_lens", "block_kv", "num_sms"],
    "fp8_paged_mqa_logits": ["q", "kv_cache", "weights", "context_lens", "block_table", "schedule_meta",
                             "max_context_len", "clean_logits", "logits_dtype"],
}
ALL_OPS = GEMMS + list(HEAD_SPLIT_GEMMS) + BF16_GEMMS + list(EINSUM_OPS) + list(HC_OPS) + list(GROUPED_GEMMS) + list(BF16_GROUPED_GEMMS) + CASTS + ["get_mn_major_tma_aligned_tensor"] + list(INDEXER)

STAND_IN_INIT = '''
"""Stand-in torch: dtypes, a shape-only Tensor, torch.ops and torch.library.custom_op (recording)."""
import types


class dtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


float8_e4m3fn, float32, bfloat16, int32 = dtype("float8_e4m3fn"), dtype("float32"), dtype("bfloat16"), dtype("int32")
uint8 = dtype("uint8")


def sym_max(a, b):
    return max(a, b)


class Tensor:
    def __init__(self, shape, strides=None, dtype=float32):
        self.shape, self.dtype = tuple(shape), dtype
        if strides is None:
            strides, stride = [0] * len(shape), 1
            for d in range(len(shape) - 1, -1, -1):
                strides[d], stride = stride, stride * max(shape[d], 1)
        self._strides = tuple(strides)

    def dim(self):
        return len(self.shape)

    def stride(self):
        return self._strides

    def new_empty(self, shape, dtype=None):
        return Tensor(shape, None, dtype or self.dtype)

    def new_empty_strided(self, shape, strides, dtype=None):
        return Tensor(shape, strides, dtype or self.dtype)


ops = types.SimpleNamespace()
from . import library  # noqa: E402
'''

STAND_IN_LIBRARY = '''
import os
import types

import torch

calls = []


class CustomOpDef:
    def __init__(self, name, fn, mutates_args):
        self.name, self.fn, self.mutates_args, self.fake = name, fn, tuple(mutates_args), None

    def register_fake(self, fn):
        self.fake = fn
        return fn


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
    if os.environ.get("STAND_IN_TORCH_FAIL") == "1":
        raise RuntimeError("stand-in registration failure")
    namespace, opname = name.split("::")
    op = CustomOpDef(name, fn, mutates_args)
    calls.append(op)
    setattr(torch.ops.__dict__.setdefault(namespace, types.SimpleNamespace()), opname, op)
    return op
'''


@pytest.fixture
def stand_in_torch(tmp_path):
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(STAND_IN_INIT)
    (pkg / "library.py").write_text(STAND_IN_LIBRARY)
    return str(tmp_path)


def run_python(body, path_first=None, **env):
    paths = [p for p in [path_first, HERE, os.environ.get("PYTHONPATH")] if p]
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join(paths), **env)
    code = "import sys\nimport pytest\n" + textwrap.dedent(body)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def test_import_does_not_import_torch_or_the_ops_module():
    run_python("""
        import hopgemm
        assert "torch" not in sys.modules, "import hopgemm imported torch"
        assert "hopgemm._torch_ops" not in sys.modules
        assert sum(type(f).__name__ == "_TorchImportHook" for f in sys.meta_path) == 1
        import importlib; importlib.reload(hopgemm)  # no second hook
        assert sum(type(f).__name__ == "_TorchImportHook" for f in sys.meta_path) == 1
    """)


@pytest.mark.parametrize("order", ["hopgemm_first", "torch_first", "probe_then_import"])
def test_ops_registered_in_either_import_order(stand_in_torch, order):
    run_python(f"""
        order = {order!r}
        if order == "torch_first":
            import torch, hopgemm
        else:
            import hopgemm
            if order == "probe_then_import":  # availability checks must not consume the hook
                import importlib.util
                assert importlib.util.find_spec("torch") is not None
                assert "torch" not in sys.modules
            import torch
        assert torch.__file__.startswith({stand_in_torch!r}), torch.__file__
        names = [op.name for op in torch.library.calls]
        assert names == ["hopgemm::" + n for n in {ALL_OPS!r}], names
        assert not any(type(f).__name__ == "_TorchImportHook" for f in sys.meta_path)
        assert hopgemm.torch_ops is torch.ops.hopgemm and hopgemm.register_torch_ops() is torch.ops.hopgemm
        assert len(torch.library.calls) == len(names), "registered twice"
    """, stand_in_torch)


def test_declared_signatures(stand_in_torch):
    run_python(f"""
        import inspect
        import torch, hopgemm
        ops = {{op.name.split("::")[1]: op for op in torch.library.calls}}
        for name in {GEMMS!r}:
            op = ops[name]
            sig = inspect.signature(op.fn)
            assert list(sig.parameters) == ["a", "sfa", "b", "sfb", "d", "c", "recipe", "recipe_a", "recipe_b"], sig
            assert op.mutates_args == ("d",)
            assert sig.parameters["c"].default is None and sig.parameters["recipe"].default is None
            assert sig.return_annotation is None
            assert op.fn.__name__ == name
        for name, params in {{**{HEAD_SPLIT_GEMMS!r}, **{EINSUM_OPS!r}}}.items():
            op = ops[name]
            sig = inspect.signature(op.fn)
            assert list(sig.parameters) == params and op.mutates_args == ("d",) and op.fn.__name__ == name, sig
        for name, params in {HC_OPS!r}.items():
            op = ops[name]
            assert list(inspect.signature(op.fn).parameters) == params and op.mutates_args == ("d", "sqr_sum"), name
        for name in {BF16_GEMMS!r}:
            op = ops[name]
            sig = inspect.signature(op.fn)
            assert list(sig.parameters) == ["a", "b", "d", "c"], sig
            assert op.mutates_args == ("d",) and sig.parameters["c"].default is None and op.fn.__name__ == name
        for name, params in {GROUPED_GEMMS!r}.items():
            op = ops[name]
            sig = inspect.signature(op.fn)
            assert list(sig.parameters) == ["a", "sfa", "b", "sfb", "d"] + params, sig
            assert op.mutates_args == ("d",) and sig.return_annotation is None and op.fn.__name__ == name
        for name, params in {BF16_GROUPED_GEMMS!r}.items():
            op = ops[name]
            sig = inspect.signature(op.fn)
            assert list(sig.parameters) == ["a", "b", "d"] + params, sig
            assert op.mutates_args == ("d",) and op.fn.__name__ == name
        for name in {CASTS!r}:
            op = ops[name]
            sig = inspect.signature(op.fn)
            assert list(sig.parameters) == ["x", "use_ue8m0", "gran_k"], sig
            assert sig.parameters["use_ue8m0"].default is False and sig.parameters["gran_k"].default == 128
            assert op.mutates_args == ()
        op = ops["get_mn_major_tma_aligned_tensor"]
        assert list(inspect.signature(op.fn).parameters) == ["sf"] and op.mutates_args == ()
        for name, params in {INDEXER!r}.items():
            op = ops[name]
            sig = inspect.signature(op.fn)
            assert list(sig.parameters) == params and op.mutates_args == () and op.fn.__name__ == name, sig
        assert inspect.signature(ops["fp8_mqa_logits"].fn).parameters["logits_dtype"].default is torch.float32
        assert inspect.signature(ops["fp8_paged_mqa_logits"].fn).parameters["clean_logits"].default is False
        assert all(op.fake is not None for op in ops.values())
    """, stand_in_torch)


def test_fake_implementations(stand_in_torch):
    run_python("""
        import torch, hopgemm
        from hopgemm import _C
        ops = {op.name.split("::")[1]: op for op in torch.library.calls}
        T = torch.Tensor

        # GEMMs allocate nothing.
        assert ops["fp8_gemm_nt"].fake(T((4, 128)), T((4, 1)), T((8, 128)), T((1, 1)), T((4, 8))) is None
        a, sfa, b, sfb = T((256, 128)), T((256, 1)), T((2, 8, 128)), T((2, 1, 1))
        assert ops["m_grouped_fp8_gemm_nt_contiguous"].fake(a, sfa, b, sfb, T((256, 8)), T((256,))) is None
        assert ops["m_grouped_fp8_gemm_nt_masked"].fake(T((2, 4, 128)), T((2, 4, 1)), b, sfb, T((2, 4, 8)),
                                                        T((2,)), 4) is None
        assert ops["k_grouped_fp8_gemm_nt_contiguous"].fake(a, sfa, a, sfa, T((2, 4, 4)), [128, 0], T((2,)), None,
                                                            [1, 1, 128]) is None

        # Quantisers: shapes, dtypes, contiguous.
        x = T((65, 300), dtype=torch.bfloat16)
        for name, sf_shape in [("per_token_cast_to_fp8", (65, 3)), ("per_block_cast_to_fp8", (1, 3))]:
            q, sf = ops[name].fake(x, False, 128)
            assert (q.shape, q.dtype, q.stride()) == ((65, 300), torch.float8_e4m3fn, (300, 1)), name
            assert (sf.shape, sf.dtype) == (sf_shape, torch.float32), (name, sf.shape)
        q, sf = ops["per_token_cast_to_fp8"].fake(x, False, 64)
        assert sf.shape == (65, 5)
        q, sf = ops["per_channel_cast_to_fp8"].fake(T((256, 300), dtype=torch.bfloat16), True, 128)
        assert q.shape == (256, 300) and sf.shape == (2, 300)
        with pytest.raises(ValueError, match="multiple of gran_k"):
            ops["per_channel_cast_to_fp8"].fake(x, False, 128)
        with pytest.raises(ValueError, match="2-D"):
            ops["per_token_cast_to_fp8"].fake(T((2, 3, 4)), False, 128)
        with pytest.raises(ValueError, match="positive"):
            ops["per_block_cast_to_fp8"].fake(x, False, 0)

        # MN-major TMA-aligned strides: the same as the C++ library's for every shape.
        fake = ops["get_mn_major_tma_aligned_tensor"].fake
        for shape in [(1, 1), (3, 7), (4, 56), (129, 4), (4097, 57), (0, 3), (5, 0), (2, 65, 7), (3, 4, 1)]:
            out = fake(T(shape))
            assert out.shape == shape and out.dtype == torch.float32
            assert out.stride() == _C.mn_major_tma_aligned_strides(list(shape), 4), (shape, out.stride())
        with pytest.raises(ValueError, match="sf_k"):
            fake(T((5,)))
        with pytest.raises(ValueError, match="float32"):
            fake(T((4, 4), dtype=torch.bfloat16))

        # The indexer: deep_gemm's padded logits views (row stride a multiple of 1024 bytes), the schedule.
        from hopgemm._torch_ops_mqa import mqa_logits_row_stride
        for cols in [0, 1, 255, 256, 257, 1000, 8448, 100001]:
            for bf16 in (False, True):
                assert mqa_logits_row_stride(cols, bf16) == _C.mqa_logits_row_stride(cols, bf16), (cols, bf16)
        fp8 = torch.float8_e4m3fn
        q, kv, sf, w, ks = T((16, 64, 128), dtype=fp8), T((300, 128), dtype=fp8), T((300,)), T((16, 64)), T((16,))
        out = ops["fp8_mqa_logits"].fake(q, kv, sf, w, ks, ks)
        assert (out.shape, out.stride(), out.dtype) == ((16, 300), (768, 1), torch.float32)
        out = ops["fp8_mqa_logits"].fake(q, kv, sf, w, ks, ks, True, 0, torch.bfloat16)
        assert (out.shape, out.stride(), out.dtype) == ((16, 300), (1024, 1), torch.bfloat16)
        out = ops["fp8_mqa_logits"].fake(q, kv, sf, w, ks, ks, False, 700)  # compressed
        assert (out.shape, out.stride()) == ((16, 700), (768, 1))
        out = ops["fp8_mqa_logits"].fake(q, T((0, 128), dtype=fp8), T((0,)), w, ks, ks)
        assert (out.shape, out.stride()) == ((16, 0), (256, 1))
        with pytest.raises(ValueError, match="logits_dtype"):
            ops["fp8_mqa_logits"].fake(q, kv, sf, w, ks, ks, True, 0, torch.float8_e4m3fn)
        meta = ops["get_paged_mqa_logits_metadata"].fake(T((5, 2), dtype=torch.int32), 64, 132)
        assert (meta.shape, meta.dtype) == ((133, 2), torch.int32)
        q, cache = T((5, 2, 64, 128), dtype=fp8), T((40, 64, 1, 132), dtype=torch.uint8)
        lens, table = T((5, 2), dtype=torch.int32), T((5, 16), dtype=torch.int32)
        out = ops["fp8_paged_mqa_logits"].fake(q, cache, T((10, 64)), lens, table, meta, 1000)
        assert (out.shape, out.stride(), out.dtype) == ((10, 1000), (1024, 1), torch.float32)
        out = ops["fp8_paged_mqa_logits"].fake(q, cache, T((10, 64)), lens, table, meta, 1025, True, torch.bfloat16)
        assert (out.shape, out.stride(), out.dtype) == ((10, 1025), (1536, 1), torch.bfloat16)
        with pytest.raises(ValueError, match="max_context_len"):
            ops["fp8_paged_mqa_logits"].fake(q, cache, T((10, 64)), lens, table, meta, -1)
    """, stand_in_torch)


def test_registration_failure_warns_and_import_still_works(stand_in_torch):
    run_python("""
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import torch, hopgemm
        assert any("torch.ops.hopgemm not registered" in str(w.message) for w in caught), caught
        assert hopgemm.get_tma_aligned_size(5, 4) == 8
        with pytest.raises(RuntimeError, match="stand-in registration failure"):
            hopgemm.register_torch_ops()
    """, stand_in_torch, STAND_IN_TORCH_FAIL="1")


def test_a_torch_without_torch_library_is_left_alone():
    # tests/python/fake_torch.py (no torch.library): no registration attempt, no warning.
    run_python("""
        import warnings
        import fake_torch
        fake_torch.install()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            import hopgemm
        assert "hopgemm._torch_ops" not in sys.modules
    """)


@requires_torch
@pytest.mark.parametrize("order", ["torch_first", "hopgemm_first"])
def test_real_torch_schemas_and_fake_shapes(order):
    # pytest.skip() inside the child would only fail it: the child says SKIP and the test skips here.
    result = run_python(f"""
        if {order!r} == "torch_first":
            import torch, hopgemm
        else:
            import hopgemm, torch
        if not hasattr(torch.library, "custom_op"):
            print("SKIP torch < 2.4 has no torch.library.custom_op")
            sys.exit(0)
        from torch._subclasses.fake_tensor import FakeTensorMode
        ops = torch.ops.hopgemm
        schema = str(ops.fp8_gemm_nt.default._schema)
        assert "Tensor(a" in schema and "!) d" in schema and schema.endswith("-> ()"), schema
        assert "Tensor? c=None" in schema and "[]? recipe=None" in schema, schema
        for name in {GEMMS[1:]!r}:
            assert str(getattr(ops, name).default._schema).split("(", 1)[1] == schema.split("(", 1)[1]
        schemas = {{name: str(getattr(ops, name).default._schema) for name in {list(GROUPED_GEMMS)!r}}}
        for schema in schemas.values():
            assert "Tensor(a" in schema and "!) d" in schema and schema.endswith("-> ()"), schema
        assert ("Tensor? grouped_layout=None, SymInt[]? recipe=None, SymInt[]? recipe_a=None, SymInt[]? recipe_b=None, "
                "bool use_psum_layout=False, SymInt? expected_m_for_psum_layout=None, Tensor? m_indices=None, "
                "bool use_packed_layout=False, bool zero_padding_blocks=True)") in schemas["m_grouped_fp8_gemm_nn_contiguous"]
        assert "Tensor masked_m, SymInt expected_m, SymInt[]? recipe=None" in schemas["m_grouped_fp8_gemm_nt_masked"]
        assert "SymInt[] ks, Tensor ks_tensor, Tensor? c, SymInt[] recipe, bool use_psum_layout=False)" in \
            schemas["k_grouped_fp8_gemm_tn_contiguous"]
        schema = str(ops.per_token_cast_to_fp8.default._schema)
        assert "bool use_ue8m0=False" in schema and "gran_k=128" in schema and "-> (Tensor, Tensor)" in schema
        with FakeTensorMode():
            x = torch.empty(65, 300, dtype=torch.bfloat16)
            q, sf = ops.per_token_cast_to_fp8(x)
            assert q.dtype == torch.float8_e4m3fn and q.shape == (65, 300) and sf.shape == (65, 3)
            q, sf = ops.per_block_cast_to_fp8(x, True, 128)
            assert sf.shape == (1, 3) and sf.dtype == torch.float32
            out = ops.get_mn_major_tma_aligned_tensor(torch.empty(129, 4))
            assert out.shape == (129, 4) and out.stride() == (1, 132)
            out = ops.get_mn_major_tma_aligned_tensor(torch.empty(3, 65, 7))
            assert out.stride() == (68 * 7, 1, 68)
            a, b = torch.empty(128, 512, dtype=torch.float8_e4m3fn), torch.empty(256, 512, dtype=torch.float8_e4m3fn)
            d = torch.empty(128, 256, dtype=torch.bfloat16)
            assert ops.fp8_gemm_nt(a, torch.empty(128, 4), b, torch.empty(2, 4), d) is None
            fp8 = torch.float8_e4m3fn
            b, sfb = torch.empty(4, 256, 512, dtype=fp8), torch.empty(4, 2, 4)
            ids = torch.empty(128, dtype=torch.int32)
            assert ops.m_grouped_fp8_gemm_nt_contiguous(a, torch.empty(128, 4), b, sfb, d, ids) is None
            assert ops.m_grouped_fp8_gemm_nn_contiguous(a, torch.empty(128, 4), b.mT, sfb.mT, d, m_indices=ids) is None
            masked_m = torch.empty(4, dtype=torch.int32)
            a, d = torch.empty(4, 32, 512, dtype=fp8), torch.empty(4, 32, 256, dtype=torch.bfloat16)
            assert ops.m_grouped_fp8_gemm_nt_masked(a, torch.empty(4, 32, 4), b, sfb, d, masked_m, 16) is None
            a, b, d = torch.empty(128 * 384, dtype=fp8), torch.empty(256 * 384, dtype=fp8), torch.empty(2, 128, 256)
            assert ops.k_grouped_fp8_gemm_nt_contiguous(a, torch.empty(128, 3), b, torch.empty(256, 3), d, [128, 256],
                                                        torch.empty(2, dtype=torch.int32), d, [1, 1, 128]) is None
            assert d.shape == (2, 128, 256)
        # A dtype default prints as its ScalarType number; the fake calls below use the defaults (float32 logits).
        schema = str(ops.fp8_mqa_logits.default._schema)
        assert "bool clean_logits=True, SymInt max_seqlen_k=0, ScalarType logits_dtype=" in schema, schema
        assert schema.endswith("-> Tensor"), schema
        assert str(ops.get_paged_mqa_logits_metadata.default._schema).endswith(
            "(Tensor context_lens, SymInt block_kv, SymInt num_sms) -> Tensor")
        schema = str(ops.fp8_paged_mqa_logits.default._schema)
        assert ("Tensor schedule_meta, SymInt max_context_len, bool clean_logits=False, "
                "ScalarType logits_dtype=") in schema and schema.endswith("-> Tensor"), schema
        with FakeTensorMode():
            q, kv = torch.empty(16, 64, 128, dtype=fp8), torch.empty(300, 128, dtype=fp8)
            ks = torch.empty(16, dtype=torch.int32)
            out = ops.fp8_mqa_logits(q, kv, torch.empty(300), torch.empty(16, 64), ks, ks, False, 700, torch.bfloat16)
            assert out.shape == (16, 700) and out.stride() == (1024, 1) and out.dtype == torch.bfloat16
            out = ops.fp8_mqa_logits(q, kv, torch.empty(300), torch.empty(16, 64), ks, ks)
            assert out.shape == (16, 300) and out.stride() == (768, 1) and out.dtype == torch.float32
            lens = torch.empty(5, dtype=torch.int32)
            meta = ops.get_paged_mqa_logits_metadata(lens, 64, 132)
            assert meta.shape == (133, 2) and meta.dtype == torch.int32
            out = ops.fp8_paged_mqa_logits(torch.empty(5, 1, 32, 64, dtype=fp8),
                                           torch.empty(9, 64, 1, 68, dtype=torch.uint8), torch.empty(5, 32), lens,
                                           torch.empty(5, 4, dtype=torch.int32), meta, 200)
            assert out.shape == (5, 200) and out.stride() == (256, 1) and out.dtype == torch.float32
    """)
    if result.stdout.startswith("SKIP "):
        pytest.skip(result.stdout[len("SKIP "):].strip())
