#!/usr/bin/env bash
# On the GPU machine, in one call: build, run every test and the sanitizers, time the JIT and the kernels
# (deepseek-v3 and wgrad-pr95 suites).
# Logs (as logs.tgz) and JSON land in $OUT (the device tool's return folder) or /tmp/hopgemm-out.
# Set HOPGEMM_COMMIT=<hash> for the JSON headers: the device machine's copy of .git can be older than the tree.
# Usage: scripts/gpu_check.sh [tests|bench|all|sustained|reliability|fuzz|soak] [extra pytest args...]
#        scripts/gpu_check.sh deepgemm [bench/vs_deepgemm.py args; none: --sfa mn,row]
#        scripts/gpu_check.sh ab OLD_SRC_DIR [ROUNDS]
#        scripts/gpu_check.sh deepgemm-files [tests/gpu/deepgemm_files/run.py args]
#   sustained: both GEMM suites with --sustain-ms 500 (each kernel settled under load first; ~2.5 min)
#   reliability: the figures of docs/RELIABILITY.md in one pass (~6-7 min on an H100; run it with the call's full 600 s),
#     four processes at once after a build of the Python package alone: the GPU Python tests but the kernel variants, with the kernels' error measured on every checked
#     output (HOPGEMM_ACCURACY_LOG, scripts/accuracy_summary.py); every kernel variant the heuristics can pick
#     (tests/gpu/test_kernel_variants.py); the mutants (scripts/mutants.py). -> $OUT/kernel_variants.json,
#     mutants.json, accuracy.json and the logs. RELIABILITY_PARTS (default "fp8 other variants mutants") picks parts.
#   fuzz: tests/gpu/fuzz_ops.py, FUZZ_PER_FAMILY (default 500) random problems of each op family against the reference,
#     FUZZ_JOBS (default 12) workers, FUZZ_SEED (29), FUZZ_BUDGET_S (default 0: none) -> $OUT/fuzz.json. Python package only.
#   soak: tests/gpu/soak.py for SOAK_SECONDS (default 120) on SOAK_STREAMS (3) streams plus CUDA graphs, after a warm-up
#     pass over its shape pool -> $OUT/soak.json. Python package only. Both: RELIABILITY_PARTS="fuzz soak" in reliability.
# GPU tests must run here: HOPGEMM_REQUIRE_GPU=1 turns any skip under tests/gpu into a failure.
#   deepgemm: hopgemm against DeepGEMM in one process (bench/vs_deepgemm.py: the dense fwd, dgrad and wgrad sets of the
#     2026-11-25 head-to-head, same inputs, alternating order, first call on fresh caches, Python host time). DeepGEMM
#     is built from .anchor/ (carry .anchor holding deepgemm-54e2261.tgz and build_deepgemm.sh) while ours builds.
#     -> $OUT/<gpu>-<date>-vs-deepgemm-<commit>.json and vs-deepgemm.txt (the table and summary). ~4-5 min.
#     The MoE grouped suites: scripts/gpu_check.sh deepgemm --suites contiguous,masked,kgrouped [--sfa mn,row]
#     (--suites all for everything; split the suites over calls to stay within a call's time limit).
#   deepgemm-files: DeepGEMM's own test files, unmodified (test_fp8_fp4.py, test_layout.py, test_bf16.py,
#     test_attention.py, test_einsum.py, test_hyperconnection.py from .anchor/'s tarball: carry .anchor), run against
#     hopgemm through the deep_gemm alias by tests/gpu/deepgemm_files/run.py (its arguments pass through: --only
#     FILE::TEST,..., --timeout SECONDS per file, --nvidia-tools). Builds the Python package only.
#     -> $OUT/deepgemm-files.json and the summary table. All six files: ~1.5 min on an H100 (2026-11-28).
#   ab: scripts/ab_builds.sh (the CLIs of OLD_SRC_DIR, e.g. a carried .old/, and of this tree, each built and cached
#     apart, timed alternately over deepseek-v3 and wgrad-pr95, ROUNDS default 2; its header says how to make .old,
#     and AB_SUITES / AB_SHAPES / AB_BENCH_ARGS narrow or change the runs) -> $OUT/ab-summary.txt. Skips this script's
#     own build. ~7-8 min for both suites at 2 rounds (~3 min per extra round: split the suites over calls).
#     Every run's JSON and log: $OUT/ab-runs.tgz.
set -uo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"; shift || true
export HOPGEMM_VENV=/tmp/hopgemm-venv HOPGEMM_BUILD_DIR=/tmp/hopgemm-build PYTHONUNBUFFERED=1
export HOPGEMM_CACHE_DIR=/tmp/hopgemm-cache
OUTDIR="${OUT:-/tmp/hopgemm-out}"; mkdir -p "$OUTDIR"
export HOPGEMM_BENCH_OUT="$OUTDIR/results.jsonl" HOPGEMM_REQUIRE_GPU=1
source scripts/setup_env.sh
set +e  # setup_env.sh turns on errexit; a failing step must not end the run (status collects it)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
dg_script=.anchor/build_deepgemm.sh dg_tarball=.anchor/deepgemm-54e2261.tgz dg_pid=""
if [ "$what" = deepgemm ]; then
  if [ -f "$dg_script" ] && [ -f "$dg_tarball" ]; then
    # DeepGEMM's build (~80 s, mostly one compile) runs while ours does.
    # shellcheck disable=SC1090
    (source "$dg_script" "$dg_tarball") > "$OUTDIR/deepgemm_build.log" 2>&1 &
    dg_pid=$!
  else
    echo "deepgemm: no $dg_script and $dg_tarball (carry .anchor); using whatever deep_gemm is importable"
  fi
fi
t0=$(date +%s)
if [ "$what" = deepgemm-files ] || [ "$what" = reliability ] || [ "$what" = fuzz ] || [ "$what" = soak ]; then  # the Python package is all they need
  "$PYTHON" -m pip install -q --no-build-isolation --no-deps -C build-dir="$BUILD_DIR/python" . > "$OUTDIR/build.log" 2>&1 ||
    { tail -50 "$OUTDIR/build.log"; exit 1; }
  echo "build (Python package): $(( $(date +%s) - t0 )) s"
elif [ "$what" != ab ]; then  # ab builds both of its CLIs itself
  scripts/build.sh > "$OUTDIR/build.log" 2>&1 || { tail -50 "$OUTDIR/build.log"; exit 1; }
  echo "build: $(( $(date +%s) - t0 )) s"
fi
status=0
if [ "$what" = tests ] || [ "$what" = all ]; then
  # Every ctest test, the slow label (the shape-grid compile) included.
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j4 > "$OUTDIR/ctest.log" 2>&1 || status=1
  grep -E "tests passed|tests failed|RESULT|Failed|\*\*\*" "$OUTDIR/ctest.log" | tail -30
  # The kernel-variant sweep (~1,400 kernels, ~5 min) runs in the reliability mode, not here.
  (cd /tmp && "$PYTHON" -m pytest -q -rs --maxfail=30 --continue-on-collection-errors "$HOPGEMM_ROOT/tests/python" \
    "$HOPGEMM_ROOT/tests/gpu" --ignore="$HOPGEMM_ROOT/tests/gpu/test_kernel_variants.py" "$@") > "$OUTDIR/pytest.log" 2>&1 ||
    status=1
  tail -25 "$OUTDIR/pytest.log"
  tests/gpu/sanitize.sh "$PYTHON" > "$OUTDIR/sanitize.log" 2>&1 || status=1  # dense, grouped and indexer subsets
  grep -E "^(memcheck|racecheck|synccheck|initcheck):" "$OUTDIR/sanitize.log"
  # The host cost per call against its targets (C++ <= 5 us, Python <= 12 us): a benchmark run alone, after the
  # tests (next to compile tests on other cores one read 5.77 us where it read 4.67 us alone, 2026-11-22); it reports,
  # it does not fail the run.
  (cd /tmp && "$PYTHON" "$HOPGEMM_ROOT/bench/host_cost.py" --cpp "$BUILD_DIR/tests/hopgemm_host_cost") 2>&1 |
    tee "$OUTDIR/host_cost.log"
fi
if [ "$what" = reliability ]; then
  export HOPGEMM_RELIABILITY_DIR="$OUTDIR"
  gpu="$HOPGEMM_ROOT/tests/gpu" pids=() parts=" ${RELIABILITY_PARTS:-fp8 other variants mutants} "
  if [[ $parts == *" fp8 "* ]]; then
    (cd /tmp && HOPGEMM_ACCURACY_LOG="$OUTDIR/accuracy-fp8.jsonl" "$PYTHON" -m pytest -q -rs "$gpu/test_fp8_gemm.py") \
      > "$OUTDIR/pytest-fp8.log" 2>&1 & pids+=($!)
  fi
  if [[ $parts == *" other "* ]]; then
    (cd /tmp && HOPGEMM_ACCURACY_LOG="$OUTDIR/accuracy-other.jsonl" "$PYTHON" -m pytest -q -rs "$gpu" \
      --ignore="$gpu/test_fp8_gemm.py" --ignore="$gpu/test_kernel_variants.py") > "$OUTDIR/pytest-other.log" 2>&1 &
    pids+=($!)
  fi
  if [[ $parts == *" variants "* ]]; then
    (cd /tmp && HOPGEMM_ACCURACY_LOG="$OUTDIR/accuracy-variants.jsonl" "$PYTHON" -m pytest -q -rs -s \
      "$gpu/test_kernel_variants.py") > "$OUTDIR/pytest-variants.log" 2>&1 & pids+=($!)
  fi
  if [[ $parts == *" mutants "* ]]; then "$PYTHON" scripts/mutants.py > "$OUTDIR/mutants.log" 2>&1 & pids+=($!); fi
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  echo "reliability runs: $(( $(date +%s) - t0 )) s since the start"
  for log in "$OUTDIR"/pytest-*.log; do echo "$(basename "$log" .log): $(tail -1 "$log")"; done
  grep -hE "^(FAILED|ERROR)" "$OUTDIR"/pytest-*.log | cut -c1-250 | head -30
  grep -hE "^kernel variants" "$OUTDIR"/pytest-variants.log 2>/dev/null
  sed -n '/^control\|^mutant /,$p' "$OUTDIR/mutants.log" 2>/dev/null
  "$PYTHON" scripts/accuracy_summary.py "$OUTDIR"/accuracy-*.jsonl --out "$OUTDIR" | tee "$OUTDIR/accuracy.log"
fi
if [ "$what" = fuzz ] || { [ "$what" = reliability ] && [[ " ${RELIABILITY_PARTS:-} " == *" fuzz "* ]]; }; then
  (cd /tmp && "$PYTHON" "$HOPGEMM_ROOT/tests/gpu/fuzz_ops.py" --per-family "${FUZZ_PER_FAMILY:-500}" \
    --jobs "${FUZZ_JOBS:-12}" --seed "${FUZZ_SEED:-29}" --budget-s "${FUZZ_BUDGET_S:-0}" --json "$OUTDIR/fuzz.json") \
    > "$OUTDIR/fuzz.log" 2>&1 || status=1
  grep -E "^fuzz|^  FAIL|^    " "$OUTDIR/fuzz.log" | head -60
fi
if [ "$what" = soak ] || { [ "$what" = reliability ] && [[ " ${RELIABILITY_PARTS:-} " == *" soak "* ]]; }; then
  (cd /tmp && "$PYTHON" "$HOPGEMM_ROOT/tests/gpu/soak.py" --seconds "${SOAK_SECONDS:-120}" \
    --streams "${SOAK_STREAMS:-3}" --json "$OUTDIR/soak.json") > "$OUTDIR/soak.log" 2>&1 || status=1
  grep -E "^soak|^  FAIL" "$OUTDIR/soak.log"; grep -q "^soak: .* streams" "$OUTDIR/soak.log" || tail -30 "$OUTDIR/soak.log"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  (cd /tmp && "$PYTHON" "$HOPGEMM_ROOT/tests/gpu/bench_quantize.py") > "$OUTDIR/bench_quantize.log" 2>&1 || status=1
  tail -15 "$OUTDIR/bench_quantize.log"
  "$BUILD_DIR/hopgemm" bench --suite deepseek-v3 --plot > "$OUTDIR/bench_gemm.log" 2>&1 || status=1
  tail -50 "$OUTDIR/bench_gemm.log"
  "$BUILD_DIR/hopgemm" bench --suite wgrad-pr95 > "$OUTDIR/bench_wgrad.log" 2>&1 || status=1
  tail -3 "$OUTDIR/bench_wgrad.log"
  cp bench/results/*-"$(date -u +%Y-%m-%d)"-deepseek-v3.json bench/results/*-"$(date -u +%Y-%m-%d)"-deepseek-v3.png \
     bench/results/*-"$(date -u +%Y-%m-%d)"-wgrad-pr95.json "$OUTDIR/" 2>/dev/null
fi
if [ "$what" = sustained ]; then
  for suite in deepseek-v3 wgrad-pr95; do
    "$BUILD_DIR/hopgemm" bench --suite "$suite" --sustain-ms 500 > "$OUTDIR/bench_${suite}_sustained.log" 2>&1 || status=1
    tail -4 "$OUTDIR/bench_${suite}_sustained.log"
  done
  cp bench/results/*-"$(date -u +%Y-%m-%d)"-*-sustained.json "$OUTDIR/" 2>/dev/null
fi
if [ "$what" = deepgemm ]; then
  dg_ok=1
  if [ -n "$dg_pid" ]; then
    if wait "$dg_pid"; then
      echo "DeepGEMM ready: $(( $(date +%s) - t0 )) s"
      # Built: this only exports PYTHONPATH and DG_JIT_CACHE_DIR into this shell.
      # shellcheck disable=SC1090
      source "$dg_script" "$dg_tarball" >> "$OUTDIR/deepgemm_build.log" 2>&1
    else
      echo "DeepGEMM build failed:"; tail -20 "$OUTDIR/deepgemm_build.log"; dg_ok=0; status=1
    fi
  fi
  if [ "$dg_ok" = 1 ]; then
    [ $# -gt 0 ] || set -- --sfa mn,row
    "$PYTHON" bench/vs_deepgemm.py "$@" --out "$OUTDIR/" --table "$OUTDIR/vs-deepgemm.txt" > "$OUTDIR/vs_deepgemm.log" 2>&1 || status=1
    grep -E "^warm-up|^  warm FAIL" "$OUTDIR/vs_deepgemm.log" | head -20
    sed -n '/^== vs DeepGEMM summary/,$p' "$OUTDIR/vs_deepgemm.log"
    grep -q "^== vs DeepGEMM summary" "$OUTDIR/vs_deepgemm.log" || tail -30 "$OUTDIR/vs_deepgemm.log"
  fi
fi
if [ "$what" = deepgemm-files ]; then
  (cd /tmp && "$PYTHON" "$HOPGEMM_ROOT/tests/gpu/deepgemm_files/run.py" --tarball "$HOPGEMM_ROOT/$dg_tarball" \
     --json "$OUTDIR/deepgemm-files.json" "$@") > "$OUTDIR/deepgemm_files.log" 2>&1 || status=1
  sed -n "/^== DeepGEMM's test files/,\$p" "$OUTDIR/deepgemm_files.log"
  grep -q "^== DeepGEMM's test files" "$OUTDIR/deepgemm_files.log" || tail -40 "$OUTDIR/deepgemm_files.log"
fi
if [ "$what" = ab ]; then
  # Its many run files stay out of $OUT until archived (a run cut off at the time limit still returns ab.log).
  export AB_WORK=/tmp/hopgemm-ab
  scripts/ab_builds.sh "$@" > "$OUTDIR/ab.log" 2>&1 || status=1
  grep -vE "^(fwd|dgrad|wgrad|role) " "$OUTDIR/ab.log" | tail -40
  cp "$AB_WORK/ab-summary.txt" "$OUTDIR/" 2>/dev/null
  tar czf "$OUTDIR/ab-runs.tgz" -C "$(dirname "$AB_WORK")" "$(basename "$AB_WORK")" 2>/dev/null
fi
# The device tool returns at most 8 files: the logs travel as one archive (the JSON and PNG stay beside it).
(cd "$OUTDIR" && tar czf logs.tgz --remove-files ./*.log ./*.jsonl ./*.xml 2>/dev/null)
exit $status
