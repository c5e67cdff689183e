#!/usr/bin/env python3
"""Merge `hopgemm tune --out` blocks into a family's tuning table (default src/heuristics/sm90_fp8_gemm_tuned.inc).

    python3 scripts/merge_tuned.py [--table TABLE.inc] NEW.inc [NEW.inc ...]

A row is {problem..., {config...}, raster_band}: the numbers before the inner brace are the problem, which appears
once in the table. A row of a new block replaces the old row of the same problem, a header left without rows goes,
the new blocks are appended in order.
"""
import re
import sys
from pathlib import Path

DEFAULT_TABLE = Path(__file__).resolve().parent.parent / "src/heuristics/sm90_fp8_gemm_tuned.inc"
ROW = re.compile(r"^\s*\{([-\d,\s]+),\s*\{[-\d,\s]+\},\s*-?\d+\},")


def problem_key(line):
    m = ROW.match(line)
    return tuple(int(x) for x in m.group(1).split(",")) if m else None


def main():
    args = sys.argv[1:]
    table = DEFAULT_TABLE
    if args[:1] == ["--table"]:
        table, args = Path(args[1]), args[2:]
    new_lines = [line for path in args for line in Path(path).read_text().splitlines()]
    bad = [line for line in new_lines if line.strip().startswith("{") and not problem_key(line)]
    if bad:
        sys.exit(f"not a table row ({{problem..., {{config...}}, band}}): {bad[0]}")
    new_keys = {k for k in map(problem_key, new_lines) if k}
    old = table.read_text().splitlines()
    # The file's own header comment (up to the first block header) stays first.
    first_block = next(i for i, line in enumerate(old) if line.startswith("// hopgemm tune"))
    kept = old[:first_block]
    block = []
    for line in old[first_block:] + ["// hopgemm tune (end)"]:
        if line.startswith("// hopgemm tune"):
            if any(problem_key(x) for x in block):
                kept += block
            block = [line]
        elif problem_key(line) not in new_keys:
            block.append(line)
    table.write_text("\n".join(kept + new_lines) + "\n")
    print(f"{table.name}: {sum(1 for x in kept if problem_key(x))} rows kept, {len(new_keys)} new or replaced")


if __name__ == "__main__":
    main()
