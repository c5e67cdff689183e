"""torch.compile and torch.export trace the plain hopgemm names (hopgemm/_dispatch.py) into torch.ops.hopgemm
calls, with no graph break. Needs only a CPU torch: the graphs are captured and inspected, never run (the ops'
fake implementations give the shapes), so the tensors can live on the CPU."""
import pytest

torch = pytest.importorskip("torch", reason="needs torch >= 2.4 (pip install torch)")
if not hasattr(torch.library, "custom_op"):
    pytest.skip(f"needs torch >= 2.4 for torch.library.custom_op, found {torch.__version__}", allow_module_level=True)

import hopgemm  # noqa: E402

M, N, K = 64, 256, 512


def linear_fp8(x, w8, sfw):
    """What a DeepGEMM user writes: the plain names, quantise then GEMM."""
    x8, sfx = hopgemm.utils.per_token_cast_to_fp8(x)
    d = torch.empty(x.shape[0], w8.shape[0], dtype=torch.bfloat16, device=x.device)
    hopgemm.fp8_gemm_nt((x8, sfx), (w8, sfw), d)
    return d


def inputs():
    return (torch.randn(M, K, dtype=torch.bfloat16), torch.empty(N, K, dtype=torch.float8_e4m3fn),
            torch.empty(N // 128, K // 128, dtype=torch.float32))


def ops_called(graph):
    return [str(node.target).removesuffix("") for node in graph.nodes
            if node.op == "call_function" and "hopgemm" in str(node.target)]


def capture_graphs(fn, *args):
    """The FX graphs Dynamo hands to the backend for fn(*args) under fullgraph=True; the graph is not run."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm.graph)
        return lambda *a: (torch.empty(M, N, dtype=torch.bfloat16),)

    torch._dynamo.reset()
    torch.compile(fn, fullgraph=True, backend=backend)(*args)
    return graphs


def test_plain_names_trace_into_one_graph():
    graphs = capture_graphs(linear_fp8, *inputs())
    assert len(graphs) == 1
    assert ops_called(graphs[0]) == ["hopgemm.per_token_cast_to_fp8", "hopgemm.fp8_gemm_nt"]


@pytest.mark.parametrize("name", ["fp8_gemm_nt", "fp8_gemm_nn", "fp8_gemm_tn", "fp8_gemm_tt", "fp8_fp4_gemm_nt"])
def test_every_gemm_name_and_its_arguments_are_traced(name):
    def fn(a8, sfa, b8, sfb, d):
        getattr(hopgemm, name)((a8, sfa), (b8, sfb), d, recipe_a=(1, 128), recipe_b=(128, 128),
                               compiled_dims="nk", disable_ue8m0_cast=True)
        return d

    x, w8, sfw = inputs()
    args = (x.to(torch.float8_e4m3fn), torch.empty(M, K // 128), w8, sfw, torch.empty(M, N, dtype=torch.bfloat16))
    graphs = capture_graphs(fn, *args)
    op = name.replace("fp8_fp4_", "fp8_")
    calls = [n for n in graphs[0].nodes
             if n.op == "call_function" and str(n.target).removesuffix(".default") == f"hopgemm.{op}"]
    assert len(calls) == 1
    assert list(calls[0].args[-2:]) == [[1, 128], [128, 128]]  # recipe_a, recipe_b reach the op


def traced_call(fn, *args):
    """The one torch.ops.hopgemm call in the graph of fn(*args): (op name, its arguments)."""
    graphs = capture_graphs(fn, *args)
    calls = [n for n in graphs[0].nodes if n.op == "call_function" and "hopgemm" in str(n.target)]
    assert len(graphs) == 1 and len(calls) == 1, calls
    return str(calls[0].target).removesuffix(".default"), list(calls[0].args)


G = 4
FP8 = torch.float8_e4m3fn
B = (torch.empty(G, N, K, dtype=FP8), torch.empty(G, N // 128, K // 128))
INDICES = torch.zeros(M, dtype=torch.int32)
A_CONTIGUOUS = (torch.empty(M, K, dtype=FP8), torch.empty(M, K // 128))


@pytest.mark.parametrize("name", ["m_grouped_fp8_gemm_nt_contiguous", "m_grouped_fp8_fp4_gemm_nt_contiguous"])
def test_m_grouped_contiguous_and_its_keywords_are_traced(name):
    def fn(a, b, d, ids):
        getattr(hopgemm, name)(a, b, d, recipe=(1, 128, 128), compiled_dims="nk", use_psum_layout=True,
                               ensure_zero_padding=False, expected_m_for_psum_layout=48, m_indices=ids)
        return d

    op, args = traced_call(fn, A_CONTIGUOUS, B, torch.empty(M, N, dtype=torch.bfloat16), INDICES)
    assert op == "hopgemm.m_grouped_fp8_gemm_nt_contiguous"
    # grouped_layout, recipe, recipe_a, recipe_b, use_psum_layout, expected_m_for_psum_layout, (m_indices), packed
    assert args[5] is None and args[6:11] == [[1, 128, 128], None, None, True, 48] and args[12] is False
    assert isinstance(args[11], torch.fx.Node)


def test_m_grouped_nn_contiguous_is_traced():
    def fn(a, b, d, ids):
        hopgemm.m_grouped_fp8_fp4_gemm_nn_contiguous(a, (b[0].mT, b[1].mT), d, ids, use_packed_layout=True)
        return d

    ends = torch.zeros(G, dtype=torch.int32)
    op, args = traced_call(fn, A_CONTIGUOUS, B, torch.empty(M, N, dtype=torch.bfloat16), ends)
    assert op == "hopgemm.m_grouped_fp8_gemm_nn_contiguous"
    # args[6:]: the recipes, use_psum_layout, expected_m, m_indices, use_packed_layout, zero_padding_blocks
    assert isinstance(args[5], torch.fx.Node) and args[6:] == [None, None, None, False, None, None, True, True]


@pytest.mark.parametrize("name", ["m_grouped_fp8_gemm_nt_masked", "m_grouped_fp8_fp4_gemm_nt_masked",
                                  "fp8_m_grouped_gemm_nt_masked"])
def test_m_grouped_masked_is_traced(name):
    def fn(a, b, d, masked_m):
        getattr(hopgemm, name)(a, b, d, masked_m, 16, recipe_a=(1, 128), recipe_b=(128, 128))
        return d

    a = (torch.empty(G, M, K, dtype=FP8), torch.empty(G, M, K // 128))
    op, args = traced_call(fn, a, B, torch.empty(G, M, N, dtype=torch.bfloat16), torch.zeros(G, dtype=torch.int32))
    assert op == "hopgemm.m_grouped_fp8_gemm_nt_masked"
    assert args[6:] == [16, None, [1, 128], [128, 128]]


@pytest.mark.parametrize("name", ["k_grouped_fp8_gemm_nt_contiguous", "k_grouped_fp8_gemm_tn_contiguous"])
def test_k_grouped_is_traced_with_ks_as_ints(name):
    ks = [128, 0, 256]

    def fn(a, b, d, ks_tensor):
        getattr(hopgemm, name)(a, b, d, ks, ks_tensor, d, compiled_dims="mn")
        return d

    a = (torch.empty(M * sum(ks), dtype=FP8), torch.empty(M, sum(ks) // 128))
    b = (torch.empty(N * sum(ks), dtype=FP8), torch.empty(N, sum(ks) // 128))
    op, args = traced_call(fn, a, b, torch.empty(len(ks), M, N), torch.tensor(ks, dtype=torch.int32))
    assert op == f"hopgemm.{name}"
    assert args[5] == ks and args[7] is args[4] and args[8:] == [[1, 1, 128], False]


def test_quantisers_and_layout_helper_are_traced():
    def fn(x):
        outs = [hopgemm.utils.per_token_cast_to_fp8(x, gran_k=64), hopgemm.per_block_cast_to_fp8(x, True),
                hopgemm.utils.per_channel_cast_to_fp8(x)]
        return outs, hopgemm.get_mn_major_tma_aligned_tensor(outs[0][1])

    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm.graph)
        return gm.forward  # never called: the call below raises before running it

    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True, backend=backend)
    with pytest.raises(ValueError, match="host memory"):  # tracing succeeded; running it on the CPU cannot
        compiled(torch.randn(256, K))  # per_channel_cast_to_fp8 needs m % 128 == 0
    assert ops_called(graphs[0]) == ["hopgemm.per_token_cast_to_fp8", "hopgemm.per_block_cast_to_fp8",
                                     "hopgemm.per_channel_cast_to_fp8",
                                     "hopgemm.get_mn_major_tma_aligned_tensor"]


@pytest.mark.parametrize("name", ["fp8_gemm_nt", "m_grouped_fp8_gemm_nt_contiguous"])
def test_stream_argument_is_refused_while_compiling(name):
    def fn(a8, sfa, b8, sfb, d):
        if name == "fp8_gemm_nt":
            hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, stream=0)
        else:
            hopgemm.m_grouped_fp8_gemm_nt_contiguous((a8, sfa), (b8[None], sfb[None]), d, INDICES, stream=0)
        return d

    x, w8, sfw = inputs()
    args = (x.to(torch.float8_e4m3fn), torch.empty(M, K // 128), w8, sfw, torch.empty(M, N, dtype=torch.bfloat16))
    torch._dynamo.reset()
    with pytest.raises(Exception, match=rf"{name}: stream= cannot be traced by torch\.compile"):
        torch.compile(fn, fullgraph=True, backend="eager")(*args)


def test_export_functionalizes_the_gemm_on_fake_tensors():
    class Linear(torch.nn.Module):
        def forward(self, x, w8, sfw):
            return linear_fp8(x, w8, sfw)

    program = torch.export.export(Linear(), inputs())
    targets = [str(n.target).removesuffix(".default") for n in program.graph.nodes if n.op == "call_function"]
    assert "hopgemm.per_token_cast_to_fp8" in targets
    # The in-place GEMM becomes a functional call on d (the op's mutates_args declaration at work).
    assert any("auto_functionalized" in t for t in targets) or "hopgemm.fp8_gemm_nt" in targets, targets
    output = [n for n in program.graph.nodes if n.op == "output"][0]
    assert output.args[0][0].meta["val"].shape == (M, N)


def test_eager_calls_do_not_go_through_the_torch_ops(monkeypatch):
    looked_up = []

    class Recorder:
        def __getattr__(self, name):
            looked_up.append(name)
            raise AssertionError(f"eager call went to torch.ops.hopgemm.{name}")

    monkeypatch.setattr(hopgemm._dispatch, "ops", Recorder())
    x, w8, sfw = inputs()
    with pytest.raises(ValueError, match="host memory"):
        hopgemm.utils.per_token_cast_to_fp8(x)
    with pytest.raises(ValueError, match="host memory"):
        hopgemm.fp8_gemm_nt((w8, sfw), (w8, sfw), torch.empty(N, N, dtype=torch.bfloat16))
    assert looked_up == []


# ---- the DeepSeek-V3.2 indexer ------------------------------------------------------------------------------------

S, S_KV, H, D = 16, 300, 64, 128
BATCH, NEXT_N, MAX_LEN = 3, 2, 1000


def traced_indexer(fn, *args, dynamic=False):
    """The torch.ops.hopgemm calls in the one graph of fn(*args): [(op name, its arguments, its fake output)]."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm.graph)
        return gm.forward  # never called: the call below raises first (CPU tensors)

    torch._dynamo.reset()
    with pytest.raises(ValueError, match="host memory"):  # tracing succeeded; running it on the CPU cannot
        torch.compile(fn, fullgraph=True, backend=backend, dynamic=dynamic)(*args)
    assert len(graphs) == 1
    return [(str(n.target).removesuffix(".default"), list(n.args), n.meta["example_value"]) for n in graphs[0].nodes
            if n.op == "call_function" and "hopgemm" in str(n.target)]


def prefill_inputs(s=S, s_kv=S_KV):
    return (torch.empty(s, H, D, dtype=FP8), torch.empty(s_kv, D, dtype=FP8), torch.empty(s_kv), torch.empty(s, H),
            torch.zeros(s, dtype=torch.int32), torch.zeros(s, dtype=torch.int32))


@pytest.mark.parametrize("name", ["fp8_mqa_logits", "fp8_fp4_mqa_logits"])
def test_indexer_prefill_is_traced_with_deepgemms_padded_view(name):
    def fn(q, kv, sf, w, ks, ke):
        if name == "fp8_mqa_logits":
            return hopgemm.fp8_mqa_logits(q, (kv, sf), w, ks, ke)
        return hopgemm.fp8_fp4_mqa_logits((q, None), (kv, sf), w, ks, ke, logits_dtype=torch.bfloat16)

    [(op, args, out)] = traced_indexer(fn, *prefill_inputs())
    assert op == "hopgemm.fp8_mqa_logits"
    bf16 = name == "fp8_fp4_mqa_logits"
    assert args[6:] == [True, 0, torch.bfloat16 if bf16 else torch.float32]
    # deep_gemm's buffer: rows for S_kv + 256 columns, a multiple of 1024 bytes.
    assert out.shape == (S, S_KV) and out.dtype == (torch.bfloat16 if bf16 else torch.float32)
    assert out.stride() == (1024 if bf16 else 768, 1)
    assert out.stride(0) == hopgemm._C.mqa_logits_row_stride(S_KV + 256, bf16)


def test_indexer_prefill_compressed_form_is_traced():
    def fn(q, kv, sf, w, ks, ke):
        return hopgemm.fp8_mqa_logits(q, (kv, sf), w, ks, ke, clean_logits=False, max_seqlen_k=700)

    [(op, args, out)] = traced_indexer(fn, *prefill_inputs())
    assert op == "hopgemm.fp8_mqa_logits" and args[6:] == [False, 700, torch.float32]
    assert out.shape == (S, 700) and out.stride() == (768, 1)  # max_seqlen_k rounded up to 256


def test_indexer_prefill_traces_with_dynamic_shapes():
    def fn(q, kv, sf, w, ks, ke):
        return hopgemm.fp8_mqa_logits(q, (kv, sf), w, ks, ke)

    [(op, args, out)] = traced_indexer(fn, *prefill_inputs(s=40, s_kv=1000), dynamic=True)
    assert op == "hopgemm.fp8_mqa_logits"
    assert out.shape == (40, 1000) and out.stride() == (1280, 1)  # symbolic, evaluated at the example sizes


def paged_inputs():
    return (torch.zeros(BATCH, NEXT_N, dtype=torch.int32), torch.empty(BATCH, NEXT_N, H, D, dtype=FP8),
            torch.empty(20, 64, 1, D + 4, dtype=torch.uint8), torch.empty(BATCH * NEXT_N, H),
            torch.zeros(BATCH, 16, dtype=torch.int32))


@pytest.mark.parametrize("name", ["fp8_paged_mqa_logits", "fp8_fp4_paged_mqa_logits"])
def test_indexer_paged_decode_is_traced_into_one_graph(name):
    def fn(lens, q, cache, w, table):
        meta = hopgemm.get_paged_mqa_logits_metadata(lens, 64, 132)
        if name == "fp8_paged_mqa_logits":
            return hopgemm.fp8_paged_mqa_logits(q, cache, w, lens, table, meta, MAX_LEN, True)
        return hopgemm.fp8_fp4_paged_mqa_logits((q, None), cache, w, lens, table, meta, MAX_LEN,
                                                logits_dtype=torch.bfloat16)

    calls = traced_indexer(fn, *paged_inputs())
    assert [c[0] for c in calls] == ["hopgemm.get_paged_mqa_logits_metadata", "hopgemm.fp8_paged_mqa_logits"]
    (_, meta_args, meta), (_, args, out) = calls
    assert meta_args[1:] == [64, 132] and meta.shape == (133, 2) and meta.dtype == torch.int32
    bf16 = name == "fp8_fp4_paged_mqa_logits"
    assert args[6:] == [MAX_LEN, not bf16, torch.bfloat16 if bf16 else torch.float32]
    assert out.shape == (BATCH * NEXT_N, MAX_LEN) and out.stride() == (1024, 1)


def test_indexer_arguments_sm90_cannot_take_are_refused_while_tracing():
    # Dynamo reports an error raised while tracing as its own exception type, with the message.
    q, kv, sf, w, ks, ke = prefill_inputs()
    for call, match in [
        (lambda: hopgemm.fp8_fp4_mqa_logits((q, sf), (kv, sf), w, ks, ke), "FP4 queries"),
        (lambda: hopgemm.fp8_mqa_logits(q, (kv, sf), w, ks, ke, stream=0), "stream= cannot be traced"),
        (lambda: hopgemm.fp8_fp4_mqa_logits(q, (kv, sf), w, ks, ke, logits_dtype=torch.float16), "logits_dtype"),
        (lambda: hopgemm.get_paged_mqa_logits_metadata(ks, 64, 132, indices=ks), "indices"),
        (lambda: hopgemm.get_paged_mqa_logits_metadata(ks, 64, 0), "num_sms"),
    ]:
        torch._dynamo.reset()
        with pytest.raises(Exception, match=match):
            torch.compile(call, fullgraph=True, backend="eager")()
