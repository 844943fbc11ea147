#!/usr/bin/env python3
"""Assign the tune/validate split of every record by the hash of its id.

split = "validate" if int(sha256(id).hexdigest(), 16) % 2 == 1 else "tune"

The split is computed, never chosen by hand. Run from anywhere:
    python3 benchmarks/data/time/make_splits.py
Rewrites conflict_pairs.jsonl and update_cases.jsonl in place (stdlib only).
"""

import hashlib
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
FILES = ("conflict_pairs.jsonl", "update_cases.jsonl")


def split_for(record_id: str) -> str:
    h = int(hashlib.sha256(record_id.encode("utf-8")).hexdigest(), 16)
    return "validate" if h % 2 == 1 else "tune"


def main() -> int:
    for name in FILES:
        path = HERE / name
        rows = [
            json.loads(line)
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        for row in rows:
            row["split"] = split_for(row["id"])
        path.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
        n_val = sum(r["split"] == "validate" for r in rows)
        print(f"{name}: {len(rows)} rows, {len(rows) - n_val} tune, {n_val} validate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
