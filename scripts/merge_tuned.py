#!/usr/bin/env python3
"""Merge `hopgemm tune --out` blocks into src/heuristics/sm90_fp8_gemm_tuned.inc.

    python3 scripts/merge_tuned.py NEW.inc [NEW.inc ...]

A problem (the first nine numbers of an entry) appears once in the table: an entry of a new block replaces the
old entry of the same problem, a header left without entries goes, the new blocks are appended in order.
"""
import re
import sys
from pathlib import Path

TABLE = Path(__file__).resolve().parent.parent / "src/heuristics/sm90_fp8_gemm_tuned.inc"
ENTRY = re.compile(r"^\s*\{([-\d,\s]+)\},")


def problem_key(line):
    m = ENTRY.match(line)
    return tuple(int(x) for x in m.group(1).split(",")[:9]) if m else None


def main():
    new_lines = [line for path in sys.argv[1:] for line in Path(path).read_text().splitlines()]
    new_keys = {k for k in map(problem_key, new_lines) if k}
    old = TABLE.read_text().splitlines()
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
    TABLE.write_text("\n".join(kept + new_lines) + "\n")
    print(f"{TABLE.name}: {sum(1 for x in kept if problem_key(x))} entries kept, {len(new_keys)} new or replaced")


if __name__ == "__main__":
    main()
