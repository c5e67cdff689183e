# Sourced by the A/B probes (bench/probes/ab_*.sh, and those bench/ab_model_picks.py writes), from the repository
# root on the GPU machine: the CLI built under /tmp, and `ab SHAPE CONFIG`, which times the heuristics' pick for SHAPE
# and CONFIG forced through `--config`, twice in alternation (`hopgemm bench`: L2 flushed, median, cuBLASLt in the same
# run), one line per run under a `== SHAPE [what]` header.
export HOPGEMM_VENV=/tmp/hopgemm-venv HOPGEMM_BUILD_DIR=/tmp/hopgemm-build HOPGEMM_CACHE_DIR=/tmp/hopgemm-cache
source scripts/setup_env.sh; set +e
[ -x "$BUILD_DIR/hopgemm" ] || build_cli /tmp/build_cli.log
ab() {
  for _ in 1 2; do
    for config in "" "$2"; do
      echo "== $1 [${config:-new model pick}]"
      "$BUILD_DIR/hopgemm" bench --shape "$1" ${config:+--config "$config"} --out /tmp/ab.json 2>&1 |
        grep -E "^(fwd|dgrad|wgrad) " | cut -c1-200
    done
  done
}
