"""torch.compile of code written with the plain names (hopgemm.fp8_gemm_nt, hopgemm.utils.per_token_cast_to_fp8, as
DeepGEMM users write it) against the same code run eagerly, and torch.library.opcheck of the GEMM op with the
per-operand recipes. tests/python/test_torch_compile.py checks the
traced graphs without a GPU."""
import pytest

from sm90_torch import require_torch_on_sm90

torch = require_torch_on_sm90("CUDA tensors and torch.compile")
if not hasattr(torch.library, "custom_op"):
    pytest.skip(f"needs torch >= 2.4 for torch.library.custom_op, found {torch.__version__}", allow_module_level=True)

import hopgemm  # noqa: E402
from fp8_gemm_inputs import check, make_inputs, poisoned  # noqa: E402


def linear_fp8(x, w8, sfw):
    x8, sfx = hopgemm.utils.per_token_cast_to_fp8(x)
    d = torch.empty(x.shape[0], w8.shape[0], dtype=torch.bfloat16, device=x.device)
    hopgemm.fp8_gemm_nt((x8, sfx), (w8, sfw), d)
    return d


def weight(n, k, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return hopgemm.utils.per_block_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g))


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
def test_plain_names_compiled_fullgraph_match_eager(backend):
    torch._dynamo.reset()
    w8, sfw = weight(2112, 7168, seed=3)
    compiled = torch.compile(linear_fp8, fullgraph=True, backend=backend, dynamic=True)
    for m in (128, 65, 1):
        x = torch.randn(m, 7168, device="cuda", dtype=torch.bfloat16)
        expected = linear_fp8(x, w8, sfw)
        assert torch.equal(compiled(x, w8, sfw), expected)
        x8, sfx = hopgemm.utils.per_token_cast_to_fp8(x)
        check(expected, x8, sfx, w8, sfw, False)


def test_plain_names_under_reduce_overhead_cuda_graphs_with_split_k():
    # 128x2112x7168 is a split-K shape (hopgemm explain): torch's CUDA graphs capture it on a stream of their own.
    torch._dynamo.reset()
    w8, sfw = weight(2112, 7168, seed=5)
    compiled = torch.compile(linear_fp8, mode="reduce-overhead", fullgraph=True)
    for seed in range(4):  # warm-up, recording, replays with new inputs
        g = torch.Generator(device="cuda").manual_seed(seed)
        x = torch.randn(128, 7168, device="cuda", dtype=torch.bfloat16, generator=g)
        got = compiled(x, w8, sfw).clone()
        assert torch.equal(got, linear_fp8(x, w8, sfw))


@pytest.mark.parametrize("recipes", [((1, 128), (128, 128)), ((1, 128), (1, 128))])
def test_opcheck_gemm_with_per_operand_recipes(recipes):
    is_1d1d = recipes[1][0] == 1
    a8, sfa, b8, sfb = make_inputs(128, 256, 512, is_1d1d, seed=9)
    d = poisoned(128, 256, torch.float32 if is_1d1d else torch.bfloat16)
    c = torch.randn(128, 256, device="cuda") if is_1d1d else None
    kwargs = dict(c=c, recipe_a=list(recipes[0]), recipe_b=list(recipes[1]))
    results = torch.library.opcheck(torch.ops.hopgemm.fp8_gemm_nt.default, (a8, sfa, b8, sfb, d), kwargs,
                                    raise_exception=False)
    failures = {name: repr(res) for name, res in results.items() if res != "SUCCESS"}
    # Some torch builds cannot compare float8 CUDA tensors (test_schema's before/after check of the inputs).
    if "Float8" in failures.get("test_schema", "") and "not implemented" in failures["test_schema"].lower():
        del failures["test_schema"]
    assert not failures
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, c=c, recipe_a=recipes[0], recipe_b=recipes[1])
    check(d, a8, sfa, b8, sfb, is_1d1d, c)
