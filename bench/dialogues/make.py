#!/usr/bin/env python3
"""Generate the short-turn dialogue development set (bench/dialogues/short_turns.json).

    python3 bench/dialogues/make.py [--out PATH] [--no-check]

Twelve synthetic two-person chat histories (LoCoMo-like: short turns, many sessions over months) and
about 300 questions about them, in the LongMemEval record format the benchmark loader reads. Standard
library only, fixed seed: two runs write byte-identical JSON. It prints a summary and a word-overlap
sanity check (a plain lexical ranker must not find context-dependent evidence; it should usually find
single-hop evidence). See README.md in this folder.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from base import OUT
from check import compact, sanity, summary, validate
from planning import build_all, records


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--no-check", action="store_true", help="skip the word-overlap sanity check")
    args = ap.parse_args()
    recs = records(build_all())
    validate(recs)
    args.out.write_text(compact(recs), encoding="utf-8")
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")
    print(json.dumps(summary(recs), indent=1, ensure_ascii=False))
    if not args.no_check:
        print(json.dumps(sanity(recs), indent=1))


if __name__ == "__main__":
    main()
