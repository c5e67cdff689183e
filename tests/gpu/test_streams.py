"""Split-K GEMMs on several streams at once, eagerly and under CUDA-graph capture (src/runtime/workspace.hpp).

Each stream, and each captured graph, must have split-K scratch (partials and tile counters) of its own: two
kernels sharing either would count each other's splits and sum each other's partials. Every kernel runs on half
the SMs, so that the kernels of two streams really run at the same time, and every output is compared bit for bit
with a run on one stream (split-K reduces in a fixed order: reruns are bitwise identical).
"""
import pytest

from sm90_torch import require_torch_on_sm90

torch = require_torch_on_sm90("CUDA tensors and streams")

import hopgemm  # noqa: E402
from fp8_gemm_inputs import check, make_inputs, poisoned  # noqa: E402

# Two decode-sized problems with different tile counts, so that the two streams' scratch differs in size too.
PROBLEMS = [(128, 2112, 7168), (64, 7168, 2048)]
ITERATIONS = 24


@pytest.fixture(autouse=True)
def half_the_sms():
    hopgemm.set_num_sms(hopgemm.device_info().num_sms // 2)
    yield
    hopgemm.set_num_sms(0)


def split_k_gemm(inputs, d, stream=None):
    a8, sfa, b8, sfb = inputs
    hopgemm._C._fp8_gemm_nt_with_config((a8, sfa), (b8, sfb), d, overrides={"k_splits": 4}, stream=stream)


def problems_with_expected():
    """[(inputs, d, expected)]: the expected output from one stream, checked against the float64 reference."""
    out = []
    for i, (m, n, k) in enumerate(PROBLEMS):
        inputs = make_inputs(m, n, k, False, seed=71 + i)
        d = poisoned(m, n, torch.bfloat16)
        split_k_gemm(inputs, d)
        torch.cuda.synchronize()
        check(d, *inputs, False)
        out.append((inputs, d, d.clone()))
    return out


def test_split_k_on_two_streams_at_once():
    problems = problems_with_expected()
    streams = [torch.cuda.Stream() for _ in problems]
    outputs = [[poisoned(*expected.shape, torch.bfloat16) for _ in range(ITERATIONS)] for _, _, expected in problems]
    torch.cuda.synchronize()  # the poison is written on the default stream
    for it in range(ITERATIONS):
        for (inputs, _, _), stream, outs in zip(problems, streams, outputs):
            with torch.cuda.stream(stream):
                split_k_gemm(inputs, outs[it])
    torch.cuda.synchronize()
    for (_, _, expected), outs in zip(problems, outputs):
        assert all(torch.equal(o, expected) for o in outs)


def test_split_k_graphs_replayed_on_two_streams_at_once():
    # Each graph is captured on a stream that never ran a split-K GEMM eagerly: the graph brings its own partials.
    problems = problems_with_expected()
    graphs = []
    for inputs, d, _ in problems:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=torch.cuda.Stream()):
            split_k_gemm(inputs, d)
        graphs.append(graph)
    streams = [torch.cuda.Stream() for _ in problems]
    history = [[poisoned(*expected.shape, torch.bfloat16) for _ in range(ITERATIONS)] for _, _, expected in problems]
    eager = [poisoned(*problems[0][2].shape, torch.bfloat16) for _ in range(ITERATIONS)]
    eager_stream = torch.cuda.Stream()
    torch.cuda.synchronize()  # the poison is written on the default stream
    for it in range(ITERATIONS):
        for (_, d, _), graph, stream, hist in zip(problems, graphs, streams, history):
            with torch.cuda.stream(stream):
                d.fill_(float("nan"))
                graph.replay()
                hist[it].copy_(d)
        with torch.cuda.stream(eager_stream):  # and an eager call of the first problem beside the replays
            split_k_gemm(problems[0][0], eager[it])
    torch.cuda.synchronize()
    for (_, _, expected), hist in zip(problems, history):
        assert all(torch.equal(h, expected) for h in hist)
    assert all(torch.equal(e, problems[0][2]) for e in eager)


def test_split_k_on_two_streams_inside_one_graph():
    # A capture forked into a second stream: the two GEMMs are parallel branches of one graph.
    problems = problems_with_expected()
    main, side = torch.cuda.Stream(), torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=main):
        side.wait_stream(main)
        split_k_gemm(problems[0][0], problems[0][1])
        with torch.cuda.stream(side):
            split_k_gemm(problems[1][0], problems[1][1])
        main.wait_stream(side)
    for _ in range(ITERATIONS):
        for _, d, _ in problems:
            d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        for _, d, expected in problems:
            assert torch.equal(d, expected)


def test_split_k_explicit_stream_argument():
    # stream= (an int handle) instead of torch's current stream: the same per-stream scratch.
    problems = problems_with_expected()
    streams = [torch.cuda.Stream() for _ in problems]
    outputs = [[poisoned(*expected.shape, torch.bfloat16) for _ in range(ITERATIONS)] for _, _, expected in problems]
    torch.cuda.synchronize()  # the poison is written on the default stream
    for it in range(ITERATIONS):
        for (inputs, _, _), stream, outs in zip(problems, streams, outputs):
            split_k_gemm(inputs, outs[it], stream=stream.cuda_stream)
    torch.cuda.synchronize()
    for (_, _, expected), outs in zip(problems, outputs):
        assert all(torch.equal(o, expected) for o in outs)
