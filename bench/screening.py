"""Screen every turn of LongMemEval (ordinary chat) and report how many read as high.

    python bench/screening.py [--data PATH] [--show] [--repeat N]

LongMemEval holds essentially no real secrets, so every flag is a likely false positive to review;
`--show` prints each flagged turn's shapes and a 300-char window around the first match. The last
line printed is always one JSON object: turns, flagged, fraction, by_shape, non_ascii (turns that
take the Unicode normalisation path), seconds, turns_per_s. The timing is the best of `--repeat`
passes (CPU time of this process, so other load on the machine skews it less).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from longmemeval import DEFAULT_DATA  # noqa: E402

from pipelines import screening  # noqa: E402


def load_turns(path: Path) -> list[str]:
    records = json.loads(path.read_text(encoding="utf-8"))
    return [turn["content"] for rec in records for session in rec["haystack_sessions"] for turn in session]


def window(text: str, width: int = 300) -> str:
    """A `width`-char window of `text` around the first match: bisect for the shortest high prefix,
    whose end is where the first flagged shape ends, and centre the window there."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if screening.is_high(text[:mid]) else (mid + 1, hi)
    start = max(0, min(lo - width // 2, len(text) - width))
    return text[start : start + width]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--show", action="store_true", help="print every flagged turn first")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes; the best one is reported")
    args = parser.parse_args(argv)

    turns = load_turns(args.data)
    seconds = float("inf")
    for _ in range(max(args.repeat, 1)):
        start = time.process_time()
        results = [screening.screen(text) for text in turns]
        seconds = min(seconds, time.process_time() - start)

    flagged = [(i, r) for i, r in enumerate(results) if r.level == screening.HIGH]
    if args.show:
        for i, r in flagged:
            print(f"--- turn {i} shapes={','.join(r.shapes)} len={len(turns[i])}")
            print(window(turns[i]).replace("\n", "\\n"))
    by_shape = Counter(shape for _, r in flagged for shape in r.shapes)
    print(
        json.dumps(
            {
                "turns": len(turns),
                "flagged": len(flagged),
                "fraction": len(flagged) / len(turns) if turns else 0.0,
                "by_shape": dict(sorted(by_shape.items())),
                "non_ascii": sum(not text.isascii() for text in turns),
                "seconds": round(seconds, 4),
                "turns_per_s": round(len(turns) / seconds) if seconds else None,
            }
        )
    )


if __name__ == "__main__":
    main()
