#!/usr/bin/env bash
# Twelfth session, on the GPU machine: the decode shapes whose tuned picks split K, re-tuned over the model's top 40
# after the fused split-K's reads went all at once (the table's incumbent is kept unless beaten by 2.5%).
export HOPGEMM_VENV=/tmp/hopgemm-venv HOPGEMM_BUILD_DIR=/tmp/hopgemm-build HOPGEMM_CACHE_DIR=/tmp/hopgemm-cache
source scripts/setup_env.sh; set +e
build_cli /tmp/build_cli.log || exit 1
out="${OUT:-/tmp}"
for s in 64x576x7168 64x2112x7168 128x576x7168 128x2112x7168 1x576x7168 1x2112x7168 1x4096x7168; do
  "$BUILD_DIR/hopgemm" tune --shape "$s" --top 40 --out "$out/tune-$s.inc" 2>> "$out/tune-candidates.log" | tee -a "$out/tune-summary.txt"
done
