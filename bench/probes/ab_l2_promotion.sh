#!/usr/bin/env bash
# The TMA descriptors' L2 promotion (256 B, DeepGEMM's and ours, against 128 B and none), two rounds in alternation,
# the CLI rebuilt per variant (host code only: the kernels stay cached). On the GPU machine, from the repository root:
#   bash bench/probes/ab_l2_promotion.sh SHAPE... > $OUT/ab-l2-promotion.txt
source bench/probes/ab_lib.sh
file=src/tma/tensor_map.cpp
cp "$file" /tmp/tensor_map.cpp.orig
for round in 1 2; do
  for variant in L2_256B L2_128B NONE; do
    sed "s/CU_TENSOR_MAP_L2_PROMOTION_L2_256B/CU_TENSOR_MAP_L2_PROMOTION_$variant/" /tmp/tensor_map.cpp.orig > "$file"
    cmake --build "$BUILD_DIR" --target hopgemm_cli > /tmp/ab-l2-build.log 2>&1 || { tail -20 /tmp/ab-l2-build.log; exit 1; }
    for shape in "$@"; do
      echo "== $shape [round $round, L2 promotion $variant]"
      "$BUILD_DIR/hopgemm" bench --shape "$shape" --out /tmp/ab.json 2>&1 | grep -E "^(fwd|dgrad|wgrad) " | cut -c1-120
    done
  done
done
cp /tmp/tensor_map.cpp.orig "$file"
