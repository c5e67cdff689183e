"""DeepGEMM's own dense FP8 GEMM test list, run through hopgemm: `import hopgemm as deep_gemm` as a DeepGEMM user would.

Takes the case list and input generators of DeepGEMM's tests (tests/generators.py of the anchor tarball: every
(kernel type, recipe, M, N, K, majors, accumulate, output dtype) its test_gemm() covers, the nt form and the nn/tn/tt
aliases) and checks each result with DeepGEMM's own calc_diff bound. Timing and the cuBLASLt comparison of test_gemm()
are left out: bench/vs_deepgemm.py times the two libraries. Needs torch and an SM90 GPU.

    python bench/deepgemm_test_list.py DEEPGEMM_TESTS_DIR     (e.g. the anchor tarball's DeepGEMM/tests)
"""
import argparse
import sys
import types

import torch

import hopgemm


def install_deep_gemm_alias():
    """`deep_gemm`, `deep_gemm.utils`, `deep_gemm.testing` as hopgemm's modules, plus the few names DeepGEMM's
    generators import for families hopgemm has not built (FP4 casts, the contiguous-layout alignment): those raise if
    a dense FP8 case ever calls them."""
    def not_built(name):
        def fn(*args, **kwargs):
            raise NotImplementedError(f"{name} is not built in hopgemm yet")
        return fn

    alignment = {"value": 128}
    utils = types.ModuleType("deep_gemm.utils")
    utils.__dict__.update({k: v for k, v in vars(hopgemm.utils).items() if not k.startswith("__")})
    for name in ("per_token_cast_to_fp4", "transpose_packed_fp4"):
        setattr(utils, name, not_built(name))
    utils.get_mk_alignment_for_contiguous_layout = lambda: alignment["value"]
    utils.set_mk_alignment_for_contiguous_layout = lambda v: alignment.update(value=v)
    testing = types.ModuleType("deep_gemm.testing")
    testing.__dict__.update({k: v for k, v in vars(hopgemm.testing).items() if not k.startswith("__")})
    testing.get_arch_major = lambda: torch.cuda.get_device_capability()[0]
    sys.modules["deep_gemm"] = hopgemm
    sys.modules["deep_gemm.utils"] = utils
    sys.modules["deep_gemm.testing"] = testing


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tests_dir", help="DeepGEMM's tests directory (holds generators.py)")
    args = parser.parse_args()
    install_deep_gemm_alias()
    sys.path.insert(0, args.tests_dir)
    import generators as g  # DeepGEMM's

    torch.manual_seed(0)
    passed, failed = 0, []
    for kernel_type, quant, m, n, k, major_a, major_b, accumulate, out_dtype in g.enumerate_normal(torch.float8_e4m3fn):
        major_opt = ("N" if major_a.is_k_major() else "T") + ("T" if major_b.is_k_major() else "N")
        use_ue8m0 = g.get_ue8m0_usage(kernel_type)
        recipe, recipe_a, recipe_b = quant.get_recipes(is_wgrad=(kernel_type.is_1d1d() and accumulate))
        for alias in (False, True):
            a, b, c, d, ref_d = g.generate_normal(m, n, k, major_a, major_b, accumulate, out_dtype, kernel_type,
                                                  use_ue8m0=use_ue8m0, quant_config=quant)
            name = f"fp8_fp4_gemm_{major_opt.lower() if alias else 'nt'}"
            if alias:
                a = a if major_a.is_k_major() else (a[0].T, a[1].T)
                b = b if major_b.is_k_major() else (b[0].T, b[1].T)
            case = (f"{name} m={m} n={n} k={k} {'1D1D' if kernel_type.is_1d1d() else '1D2D'} acc={int(accumulate)} "
                    f"{'fp32' if out_dtype == torch.float else 'bf16'}")
            try:
                getattr(hopgemm, name)(a, b, d, c=c, disable_ue8m0_cast=not use_ue8m0, recipe=recipe,
                                       recipe_a=recipe_a, recipe_b=recipe_b)
                diff = float(hopgemm.testing.calc_diff(d, ref_d))
                if diff < quant.max_diff():
                    passed += 1
                else:
                    failed.append(f"{case}: calc_diff {diff:.2e} >= {quant.max_diff():.0e}")
            except Exception as e:  # a refusal counts as a failure: DeepGEMM runs every case
                failed.append(f"{case}: {type(e).__name__}: {e}")
    for line in failed:
        print("FAILED", line)
    print(f"DeepGEMM's dense FP8 test list through hopgemm: {passed} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
