#!/usr/bin/env bash
# A/B: A's TMA box of M's rows (M < block_m) against the whole tile's rows (HOPGEMM_AB_FULL_A_BOX=1), the heuristics'
# pick of each shape, twice in alternation. On the GPU machine, from the repository root.
source bench/probes/ab_lib.sh
for shape in "$@"; do
  for _ in 1 2; do
    for full in "" 1; do
      echo "== $shape [${full:+full box}${full:-box of M}]"
      HOPGEMM_AB_FULL_A_BOX=$full "$BUILD_DIR/hopgemm" bench --shape "$shape" --out /tmp/ab.json 2>&1 |
        grep -E "^(fwd|dgrad|wgrad) " | cut -c1-120
    done
  done
done
