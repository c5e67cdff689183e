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


def test_stream_argument_is_refused_while_compiling():
    def fn(a8, sfa, b8, sfb, d):
        hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, stream=0)
        return d

    x, w8, sfw = inputs()
    args = (x.to(torch.float8_e4m3fn), torch.empty(M, K // 128), w8, sfw, torch.empty(M, N, dtype=torch.bfloat16))
    torch._dynamo.reset()
    with pytest.raises(Exception, match=r"stream= cannot be traced by torch\.compile"):
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
