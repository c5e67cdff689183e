#!/usr/bin/env bash
# On the GPU machine: an old source tree's `hopgemm` CLI against this tree's, each built into its own /tmp build dir
# with its own JIT cache, timed alternately over whole suites, plus each build's C++ host time per GEMM call.
#
#   scripts/ab_builds.sh OLD_SRC_DIR [ROUNDS]          (or: scripts/gpu_check.sh ab OLD_SRC_DIR [ROUNDS])
#
# OLD_SRC_DIR: a carried copy of the old commit's source, made on the dev machine, e.g. for eddb3f7:
#     rm -rf .old && mkdir .old && git archive eddb3f7 -- . ':!bench/results' | tar -x -C .old
#     echo /.old/ >> "$(git rev-parse --git-common-dir)/info/exclude"      # then pass carry: [".old"]
# ROUNDS (default 2): each round runs every suite once per build, old then new in odd rounds and new then old in
#   even ones (2 rounds: old, new, new, old), so that drift over the run falls on both builds alike.
# Each run is `hopgemm bench --suite S --iters N` (L2 flushed before every call, median of N; the cuBLASLt baselines
# run too, the CLI has no switch for them). A whole suite per run rather than one `--shape` per run: a run's time goes
# mostly into generating its random inputs on the host (deepseek-v3: ~55-60 s a run, wgrad-pr95 ~25 s) and per-shape
# runs would add a process, CUDA and cuBLASLt start-up per shape per side per round. So both suites at 2 rounds take
# ~6 min of runs (~7.5 min in all with the builds): a third round does not fit one 10-minute device call; split the
# suites over calls (AB_SUITES; on a warm machine the builds and caches are reused) or time a few shapes (AB_SHAPES).
# AB_SHAPES="S1 S2 ..." (as `hopgemm bench --shape`, e.g. "4096x7168x16384 wgrad:7168x16384x4096"): instead of the
#   suites, one `--shape` run per shape, per shape old,new (odd rounds) / new,old (even rounds); ~2-5 s a run.
# Suite kernels are precompiled first (`hopgemm precompile --suite S --jobs <cores>`, both scale layouts), so no
# compile falls in a run (with AB_SHAPES a shape's first run compiles its kernel, before its untimed warm-ups end).
# Host time: the CLI cannot report it, so each build's own GPU test binary runs its
# `JitTimings.WarmHostCostPerGemmCall` (C++ fp8_gemm_nt, 128x256x256, 20 batches of 200 calls, best and median batch),
# four times per build in ABBA order.
# Env: AB_SUITES (default "deepseek-v3 wgrad-pr95"), AB_SHAPES, AB_ITERS (default 30), AB_BENCH_ARGS (extra bench
# options for both builds, e.g. "--sfa row"), AB_WORK (default /tmp/hopgemm-ab: build logs, every run's JSON and log,
# the summary ab-summary.txt), AB_SUMMARY_ONLY=1 (no builds or runs: the summary of the runs already in AB_WORK, e.g.
# after a call cut off at the time limit, on the still-warm machine). HOPGEMM_COMMIT names this tree in the summary.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: scripts/ab_builds.sh OLD_SRC_DIR [ROUNDS]  (OLD_SRC_DIR: a source tree)"; exit 2
fi
old_src="$(realpath "$1")"
rounds="${2:-2}"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a positive integer, got '$rounds'"; exit 2; }
[ -f "$old_src/scripts/setup_env.sh" ] || { echo "$old_src has no scripts/setup_env.sh"; exit 2; }
new_src="$(pwd)"
work="${AB_WORK:-/tmp/hopgemm-ab}"
read -r -a suites <<< "${AB_SUITES:-deepseek-v3 wgrad-pr95}"
read -r -a shapes <<< "${AB_SHAPES:-}"
# What one run times, as "GROUP|bench selection": a whole suite, or (AB_SHAPES) one shape of the group "shapes".
selections=() groups=()
if [ ${#shapes[@]} -gt 0 ]; then
  for shape in "${shapes[@]}"; do selections+=("shapes|--shape $shape"); done
  groups=(shapes)
else
  for suite in "${suites[@]}"; do selections+=("$suite|--suite $suite"); done
  groups=("${suites[@]}")
fi
read -r -a bench_args <<< "${AB_BENCH_ARGS:-}"
iters="${AB_ITERS:-30}"
unset HOPGEMM_INCLUDE_DIR  # each CLI must JIT-compile its own tree's device headers (its build's default)
export HOPGEMM_VENV="${HOPGEMM_VENV:-/tmp/hopgemm-venv}"
mkdir -p "$work"
t_start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - t_start )) s"; }
build_dir() { echo "/tmp/hopgemm-ab-$1-build"; }
cache_dir() { echo "/tmp/hopgemm-ab-$1-cache"; }

# build SIDE SRC: the CLI and the GPU test binary of SRC (its own scripts/setup_env.sh and build_cli).
build() {
  (
    # shellcheck disable=SC2030  # this build's own dir, in its subshell on purpose
    HOPGEMM_BUILD_DIR="$(build_dir "$1")"
    export HOPGEMM_BUILD_DIR
    # shellcheck disable=SC1091
    source "$2/scripts/setup_env.sh" || exit 1
    set +e
    build_cli "$work/build-$1.log" || exit 1
    # The host-cost benchmark binary where the tree has one, else the GPU test binary with its host-cost test.
    cmake --build "$BUILD_DIR" -j"$JOBS" --target hopgemm_host_cost >> "$work/build-$1.log" 2>&1 ||
      cmake --build "$BUILD_DIR" -j"$JOBS" --target hopgemm_gpu_tests >> "$work/build-$1.log" 2>&1 ||
      echo "$1: no host-cost binary built (no host-cost figure for it; $work/build-$1.log)"
  )
}
cli() { HOPGEMM_CACHE_DIR="$(cache_dir "$1")" "$(build_dir "$1")/hopgemm" "${@:2}"; }

# Builds, precompiles, runs the rounds and the host-cost test, into $work.
measure() {
  rm -f "$work"/run-*.json "$work"/run-*.log "$work"/host-*.txt "$work"/precompile-*.log
  # The venv (and any missing build package) once, before the two builds run side by side.
  (source scripts/setup_env.sh) > "$work/setup.log" 2>&1 || { tail -20 "$work/setup.log"; exit 1; }

  build old "$old_src" & pid_old=$!
  build new "$new_src" & pid_new=$!
  ok=1
  wait "$pid_old" || { echo "old build failed"; ok=0; }
  wait "$pid_new" || { echo "new build failed"; ok=0; }
  [ "$ok" = 1 ] || { tail -30 "$work"/build-*.log; exit 1; }
  echo "built both CLIs: $(elapsed)"

  for side in old new; do
    [ ${#shapes[@]} -gt 0 ] && break
    for suite in "${suites[@]}"; do
      cli "$side" precompile --suite "$suite" --jobs "$(nproc)" >> "$work/precompile-$side.log" 2>&1 ||
        echo "precompile $side $suite failed (its kernels compile in the bench's warm-ups instead):" \
          "$(tail -1 "$work/precompile-$side.log")"
    done
  done
  echo "precompiled: $(elapsed)"

  for round in $(seq "$rounds"); do
    order=(old new); [ $((round % 2)) = 0 ] && order=(new old)
    for i in "${!selections[@]}"; do
      group="${selections[$i]%%|*}"
      read -r -a selection <<< "${selections[$i]#*|}"
      for side in "${order[@]}"; do
        run="$work/run-$side-$group-r$round-$i"
        cli "$side" bench "${selection[@]}" --iters "$iters" "${bench_args[@]}" --out "$run.json" > "$run.log" 2>&1 ||
          echo "round $round $side ${selection[*]}: bench failed ($(tail -1 "$run.log"))"
      done
    done
    echo "round $round done: $(elapsed)"
  done

  for rep in 1 2 3 4; do
    order=(old new); [ $((rep % 2)) = 0 ] && order=(new old)
    for side in "${order[@]}"; do
      bench_bin="$(build_dir "$side")/tests/hopgemm_host_cost" tests="$(build_dir "$side")/tests/hopgemm_gpu_tests"
      if [ -x "$bench_bin" ]; then  # its fp8_gemm_nt line, as the test's RESULT JSON
        HOPGEMM_BENCH_OUT="" HOPGEMM_CACHE_DIR="$(cache_dir "$side")" "$bench_bin" 2>&1 |
          awk '/^fp8_gemm_nt/ {gsub(/[(),]/, " "); for (i = 1; i <= NF; ++i) { if ($i == "us" && !b) b = $(i - 1);
               if ($i == "batch") m = $(i + 1) } printf "RESULT {\"warm_us_per_call\": %s, \"median_batch_us\": %s}\n", b, m}' \
          >> "$work/host-$side.txt"
      elif [ -x "$tests" ]; then
        HOPGEMM_BENCH_OUT="" HOPGEMM_CACHE_DIR="$(cache_dir "$side")" "$tests" \
          --gtest_filter='JitTimings.WarmHostCostPerGemmCall' 2>&1 | grep '^RESULT' >> "$work/host-$side.txt"
      fi
    done
  done
  echo "host cost measured: $(elapsed)"
}
[ "${AB_SUMMARY_ONLY:-0}" = 1 ] || measure

new_name="${HOPGEMM_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo this tree)}"
summary_args=("$work" "$rounds" "$iters" "$old_src" "$new_name" "${AB_BENCH_ARGS:-}" "${groups[@]}")
python3 - "${summary_args[@]}" <<'EOF' | tee "$work/ab-summary.txt"
import glob, json, math, os, re, statistics, sys

work, rounds, iters, old_src, new_name, bench_args, *suites = sys.argv[1:]
out = []
say = out.append

def runs(side, group):
    """{round: {(role, m, n, k): (us, config)}} of the group's runs (run-SIDE-GROUP-rROUND-INDEX.json) that wrote
    their JSON."""
    found = {}
    for path in glob.glob(os.path.join(work, f"run-{side}-{group}-r*.json")):
        match = re.fullmatch(rf"run-{side}-{re.escape(group)}-r(\d+)-\d+\.json", os.path.basename(path))
        if not match:
            continue
        with open(path) as f:
            rows = json.load(f)["rows"]
        found.setdefault(int(match.group(1)), {}).update(
            {(r["note"].split()[0], r["m"], r["n"], r["k"]): (r["ours_us"], r.get("config", "")) for r in rows})
    return found

def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v))

gpu = "?"
for path in glob.glob(os.path.join(work, "run-*.json")):
    with open(path) as f:
        gpu = json.load(f)["header"].get("gpu", "?")
    break
summary = [f"== A/B builds: old = {old_src}, new = {new_name}; {gpu}; {rounds} round(s) (old,new then new,old), "
           f"hopgemm bench --iters {iters} {bench_args}".rstrip()]
for suite in suites:
    old, new = runs("old", suite), runs("new", suite)
    keys = []
    for rnd in sorted(set(old) | set(new)):
        for key in list(old.get(rnd, {})) + list(new.get(rnd, {})):
            if key not in keys:
                keys.append(key)
    say(f"-- {suite}: old runs {sorted(old)}, new runs {sorted(new)}")
    say(f"{'role':5} {'M':>5} {'N':>5} {'K':>5} | {'old us':>8} {'new us':>8} | {'old/new':>7} "
        f"{'per-round old/new':>20} | config")
    ratios = []
    for key in keys:
        o = [old[r][key][0] for r in old if key in old[r] and old[r][key][0]]
        n = [new[r][key][0] for r in new if key in new[r] and new[r][key][0]]
        paired = [old[r][key][0] / new[r][key][0] for r in old
                  if r in new and key in old[r] and key in new[r] and old[r][key][0] and new[r][key][0]]
        configs = {c for side in (old, new) for r in side if key in side[r] for c in [side[r][key][1]]}
        new_config = next((new[r][key][1] for r in new if key in new[r]), "")
        ratio = statistics.median(o) / statistics.median(n) if o and n else None
        if ratio:
            ratios.append((ratio, key))
        span = f"{min(paired):.3f}..{max(paired):.3f}" if paired else "n/a"
        config = new_config.split(" tiles=")[0].replace("Sm90Fp8GemmConfig", "")
        say(f"{key[0]:5} {key[1]:5} {key[2]:5} {key[3]:5} | "
            f"{statistics.median(o) if o else float('nan'):8.1f} {statistics.median(n) if n else float('nan'):8.1f} | "
            f"{ratio if ratio else float('nan'):7.3f} {span:>20} | {'CHANGED ' if len(configs) > 1 else ''}{config}")
    if ratios:
        low, high = min(ratios), max(ratios)
        name = lambda k: f"{k[0]} {k[1]}x{k[2]}x{k[3]}"
        summary.append(f"{suite:12} {len(ratios):2} shapes: old/new geomean {geomean([r for r, _ in ratios]):.3f}x, "
                       f"min {low[0]:.3f}x ({name(low[1])}), max {high[0]:.3f}x ({name(high[1])}), "
                       f"new faster on {sum(1 for r, _ in ratios if r > 1)}")
    else:
        summary.append(f"{suite:12} no complete runs")
    say("")

for side in ("old", "new"):
    path = os.path.join(work, f"host-{side}.txt")
    results = []
    if os.path.exists(path):
        with open(path) as f:
            results = [json.loads(line.split(" ", 1)[1]) for line in f if line.startswith("RESULT ")]
    if results:
        best = min(r["warm_us_per_call"] for r in results)
        med = statistics.median(r["median_batch_us"] for r in results)
        summary.append(f"host time per C++ fp8_gemm_nt call ({side}): best batch {best:.2f} us, median batch "
                       f"{med:.2f} us over {len(results)} runs")
    else:
        summary.append(f"host time per C++ fp8_gemm_nt call ({side}): n/a")
summary.append("old/new > 1: the new build is faster")
print("\n".join(out + summary))
EOF
echo "total: $(elapsed); runs, logs and ab-summary.txt in $work"
