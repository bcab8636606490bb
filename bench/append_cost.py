"""The cost of conversation.append's one statement (``models.queries.turns.APPEND_TURN``), timed
in-process on a bare migrated PostgreSQL: no HTTP, no worker, so what changes between two builds
is the statement itself.

    .venv/bin/python bench/append_cost.py [--turns 3000] [--rounds 3] [--data FILE]

Each round appends the first ``--turns`` user/assistant turns of the LongMemEval sessions, one
thread a session, in order, through ``pipelines.appending.write`` on one autocommit connection
into a namespace of its own, timing the statement alone (the screening and the embedding text's
cut, in Python, are left out: they do not change with it); it reports the median and p95 of one
statement and the total. Each round then sends the same turns again (duplicates: what an
idempotent retry costs). The machine is shared: compare the best round of each build."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import embedded_database, log, percentile, rounded  # noqa: E402
from longmemeval import DEFAULT_DATA, load_records, unique_sessions  # noqa: E402

RECORDING = (
    "INSERT INTO namespaces (name, conversation_logging_enabled, created_at, updated_at) "
    "VALUES (:n, true, now(), now())"
)


@dataclass(frozen=True)
class Spelling:
    name: str = "embedding"
    subject_kind: str = "embedding"


class Timed:
    """The connection, its statements timed (milliseconds each, in ``spent``)."""

    def __init__(self, conn) -> None:
        self.conn, self.spent = conn, []

    def execute(self, *args):
        started = time.perf_counter()
        try:
            return self.conn.execute(*args)
        finally:
            self.spent.append((time.perf_counter() - started) * 1000)


def appended(conn, namespace: str, turns, write, new_turn) -> list[float]:
    """Milliseconds of each statement."""
    timed = Timed(conn)
    for t in turns:
        turn = new_turn(
            namespace=namespace, thread_id=t.session_id, agent="bench", role=t.role, content=t.content,
            msg_id=t.msg_id,
        )  # fmt: skip
        write(timed, turn, Spelling())
    return timed.spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    sessions = unique_sessions(load_records(args.data))
    turns = [t for session in sessions.values() for t in session][: args.turns]
    with embedded_database("append-cost"):
        from sqlalchemy import text

        from models import db
        from pipelines.appending import NewTurn, write

        for round_ in range(args.rounds):
            namespace = f"bench-{round_}"
            with db.session() as s:
                s.execute(text(RECORDING), {"n": namespace})
            with db.autocommit() as conn:
                new = appended(conn, namespace, turns, write, NewTurn)
                again = appended(conn, namespace, turns, write, NewTurn)
            for what, spent in (("new", new), ("re-sent", again)):
                log(
                    f"round {round_} {what}: {len(spent)} writes, median {statistics.median(spent):.3f} ms, "
                    f"p95 {rounded(percentile(spent, 95), 3)} ms, total {sum(spent) / 1000:.2f} s"
                )


if __name__ == "__main__":
    main()
