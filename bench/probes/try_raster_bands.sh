#!/usr/bin/env bash
# Raster bands other than the default 16 on suite shapes (the tuner has only measured 16; a band of 1 made dgrad
# 4096x512x32768 with row-major scales 3.9% faster). On the GPU machine after scripts/build.sh:
#   bash bench/probes/try_raster_bands.sh > $OUT/try-raster-bands.txt
export HOPGEMM_VENV=/tmp/hopgemm-venv HOPGEMM_BUILD_DIR=/tmp/hopgemm-build HOPGEMM_CACHE_DIR=/tmp/hopgemm-cache
source scripts/setup_env.sh; set +e
cd /tmp
"$PYTHON" "$HOPGEMM_ROOT/bench/try_configs.py" --rounds 3 4096x512x32768 "cluster_n=1,raster_band=1" "raster_band=1"
"$PYTHON" "$HOPGEMM_ROOT/bench/try_configs.py" --rounds 2 \
  4096x7168x16384,8192x8192x8192,4096x2112x7168,4096x576x7168,4096x1536x24576,4096x4096x7168,4096x7168x2048 \
  "raster_band=1" "raster_band=4" "raster_band=8" "raster_band=32"
"$PYTHON" "$HOPGEMM_ROOT/bench/try_configs.py" --rounds 2 wgrad:7168x2112x4096,wgrad:4096x7168x4096,wgrad:512x32768x4096 \
  "raster_band=1" "raster_band=4" "raster_band=32"
# Second pass (same session): the suite shapes the first left out, 3 rounds; the row-major-scale rows of the two
# shapes whose MN-major rows took a band.
"$PYTHON" "$HOPGEMM_ROOT/bench/try_configs.py" --rounds 3 \
  4096x24576x1536,4096x32768x512,4096x7168x2112,4096x7168x576,4096x16384x7168,4096x2048x7168,4096x7168x4096 \
  "raster_band=1" "raster_band=4" "raster_band=8"
"$PYTHON" "$HOPGEMM_ROOT/bench/try_configs.py" --sfa row --rounds 3 4096x2112x7168,4096x576x7168 \
  "raster_band=1" "raster_band=4"
