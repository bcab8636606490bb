"""Expiring a month of transcript with the retention TTL, on a fresh `loom up`: one month of
N turns (1,000,000 by default) loaded with COPY is dropped by the retention stage (its partition
detached and dropped, the threads' counts adjusted, its keys removed in batches), and the same
number of turns in the month the cutoff falls in is trimmed in batches (the DELETE that a table
without monthly partitions would need for every month it expires). Each through
`loom passes run retention --wait`, as an operator would, with the TTL set for that command.

    .venv/bin/python bench/retention.py [--turns 1000000]

Prints progress on stderr and one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import UTC, datetime

from harness import Loom, code_version, log, rounded

NAMESPACE = "retention-bench"
THREADS = 1000
DROPPED, TRIMMED = datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 4, 1, tzinfo=UTC)
TEXT = "we moved the nightly export to four in the morning after the audit team agreed to it, turn "


def load(conn, month: datetime, turns: int) -> float:
    """COPY ``turns`` turns said in ``month`` (days 1-28), their keys and their threads."""
    started = time.perf_counter()
    span = 28 * 86_400
    end = month.replace(month=month.month + 1)
    # COPY goes through no write path: make the month's partition as a write of that month would.
    bounds = f"FROM ('{month}') TO ('{end}')"
    conn.execute(f"CREATE TABLE turns_p{month:%Y_%m} PARTITION OF turns FOR VALUES {bounds}")
    with conn.cursor().copy(
        "COPY turns (namespace, thread_id, agent, msg_id, role, content, metadata, sensitivity, "
        "screened_with, ts) FROM STDIN"
    ) as copy:
        for i in range(turns):
            said = datetime.fromtimestamp(month.timestamp() + i * span // turns, UTC)
            role = "user" if i % 2 == 0 else "assistant"
            thread = f"{month:%Y%m}-{i % THREADS}"
            copy.write_row((NAMESPACE, thread, "bench", f"m{i}", role, TEXT + str(i), "{}", "none", 1, said))
    conn.execute(
        "INSERT INTO turn_keys SELECT namespace, thread_id, agent, msg_id, id, ts FROM turns "
        "WHERE ts >= %s AND ts < %s",
        (month, month.replace(month=month.month + 1)),
    )
    conn.execute(
        "INSERT INTO threads (namespace, thread_id, agent, metadata, turn_count, created_at, last_turn_at) "
        "SELECT namespace, thread_id, 'bench', '{}', count(*), min(ts), max(ts) FROM turns "
        "WHERE ts >= %s AND ts < %s GROUP BY namespace, thread_id",
        (month, month.replace(month=month.month + 1)),
    )
    conn.execute("VACUUM ANALYZE turns")
    return time.perf_counter() - started


def expire(loom: Loom, conn, cutoff: datetime, month: datetime) -> dict:
    days = (datetime.now(UTC) - cutoff).days  # the cutoff of that many days: the start of ``cutoff``'s day
    started = time.perf_counter()
    ttl = {"LOOM_RETENTION_CONVERSATIONS_DAYS": str(days)}
    out = loom.cli("passes", "run", "retention", "--wait", "--timeout", "3600", env=ttl, timeout=3700)
    elapsed = time.perf_counter() - started
    (run,) = conn.execute(
        "SELECT result FROM stage_runs WHERE stage = 'retention' AND subject = %s ORDER BY id DESC LIMIT 1",
        (f"month:{month:%Y%m}",),
    ).fetchall()
    left = conn.execute(
        "SELECT count(*) FROM turns WHERE ts >= %s AND ts < %s", (month, month.replace(month=month.month + 1))
    ).fetchone()[0]
    log(f"{out.strip()}: {run[0]} in {elapsed:.1f}s; {left} turns of {month:%Y-%m} left")
    return {"seconds": rounded(elapsed), "result": run[0], "left": left}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1_000_000)
    args = parser.parse_args()
    with Loom() as loom, loom.connect() as conn:
        loaded = {}
        for month in (DROPPED, TRIMMED):
            loaded[f"{month:%Y-%m}"] = rounded(load(conn, month, args.turns))
            log(f"loaded {args.turns} turns into {month:%Y-%m} in {loaded[f'{month:%Y-%m}']}s")
        size = conn.execute("SELECT pg_size_pretty(pg_total_relation_size('turns_p2024_03'))").fetchone()[0]
        dropped = expire(loom, conn, TRIMMED, DROPPED)  # the cutoff on April 1st: March is dropped
        trimmed = expire(loom, conn, datetime(2024, 4, 29, tzinfo=UTC), TRIMMED)  # April 1-28 trimmed
    print(
        json.dumps(
            {
                "turns_a_month": args.turns,
                "month_size": size,
                "load_seconds": loaded,
                "drop_month": dropped,
                "trim_month_in_batches": trimmed,
                **code_version(),
            }
        )
    )


if __name__ == "__main__":
    main()
