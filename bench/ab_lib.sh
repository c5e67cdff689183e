# Sourced by A/B probes (those bench/ab_model_picks.py writes, or hand-written ones), from the repository
# root on the GPU machine: the CLI built under /tmp, and `ab SHAPE CONFIG`, which times the heuristics' pick for SHAPE
# and CONFIG forced through `--config`, twice in alternation (`hopgemm bench`: L2 flushed, median, cuBLASLt in the same
# run), one line per run under a `== SHAPE [what]` header. For a kernel change: `build_old_cli PATCH` builds the CLI of
# this tree with PATCH reversed (the code before the change) under /tmp/old-build, and `ab_old_new SHAPE [CONFIG]`
# times the same config (or each build's pick) through both CLIs in alternation, twice, under headers that
# bench/ab_model_picks.py --summary reads (new: "new model pick").
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
build_old_cli() {
  rm -rf /tmp/old-src && mkdir -p /tmp/old-src &&
    tar --exclude="./build*" --exclude=./.git -cf - . | tar -xf - -C /tmp/old-src
  (cd /tmp/old-src && patch -s -R -p1 < "$HOPGEMM_ROOT/$1") || return 1
  (HOPGEMM_ROOT=/tmp/old-src BUILD_DIR=/tmp/old-build build_cli /tmp/old-build.log)
}
ab_old_new() {
  local tag; tag=$(echo "${2:-pick}" | sed -E 's/block_m=([0-9]+),block_n=([0-9]+).*/\1x\2/')
  for _ in 1 2; do
    for which in old new; do
      local bin="$BUILD_DIR/hopgemm" cache=/tmp/hopgemm-cache
      [ "$which" = old ] && bin=/tmp/old-build/hopgemm cache=/tmp/old-cache
      [ "$which" = new ] && echo "== $1:$tag [new model pick]" || echo "== $1:$tag [old]"
      HOPGEMM_CACHE_DIR=$cache "$bin" bench --shape "$1" ${2:+--config "$2"} --out /tmp/ab.json 2>&1 |
        grep -E "^(fwd|dgrad|wgrad) " | cut -c1-200
    done
  done
}
