#!/usr/bin/env bash
# The WGMMA descriptors of every cached GEMM kernel: R2UR instructions in the window around its WGMMAs, where there
# should be none (docs/DESIGN_NOTES.md, uniform datapath: a descriptor moved from a vector register before every WGMMA
# means ptxas lost the loop's uniformity). The window and the count are tests/python/test_uniform_datapath.py's
# (`r2ur_in_mma_window`, with its nvdisasm lookup): one rule, which the test checks on the kernels it compiles and this
# script applies to a whole cache. No GPU needed:
#   HOPGEMM_CACHE_DIR=/tmp/kc hopgemm precompile --suite deepseek-v3   (and wgrad-pr95)
#   bench/sass_mainloop_r2ur.sh /tmp/kc
# Prints "R2UR-in-window R2UR-in-kernel config" per kernel with WGMMAs, worst first. PYTHON: the interpreter (default
# python3; it needs pytest, which the test module imports); NVDISASM: the disassembler, as for the test.
set -euo pipefail
cache="${1:?usage: sass_mainloop_r2ur.sh JIT_CACHE_DIR}"
"${PYTHON:-python3}" - "$cache" "$(cd "$(dirname "$0")/../tests/python" && pwd)" <<'PY'
import glob, os, sys

cache, tests = sys.argv[1:]
sys.path.insert(0, tests)
from test_uniform_datapath import disassemble, find_nvdisasm, kernel_config, r2ur_in_mma_window, sass_instructions

tool = find_nvdisasm()
if tool is None:
    sys.exit("no nvdisasm: set NVDISASM, or pip install nvidia-cuda-nvdisasm (scripts/setup_env.sh does)")
rows = []
for cubin in glob.glob(os.path.join(cache, "**", "*.cubin"), recursive=True):
    sass = disassemble(tool, cubin)
    window = r2ur_in_mma_window(sass)
    if window is not None:
        in_kernel = sum("R2UR" in op for op in sass_instructions(sass))
        rows.append((window, in_kernel, kernel_config(cubin) or os.path.dirname(cubin)))
for window, in_kernel, config in sorted(rows, key=lambda row: row[:2], reverse=True):
    print(window, in_kernel, config)
PY
