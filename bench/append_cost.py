"""The cost of conversation.append's one statement (``models.queries.turns.APPEND_TURN``), timed
in-process on a bare migrated PostgreSQL: no HTTP, no worker, so what changes between two builds
is the statement itself.

    .venv/bin/python bench/append_cost.py [--turns 3000] [--rounds 3] [--data FILE] [--against REV]

Each round appends the first ``--turns`` user/assistant turns of the LongMemEval sessions, one
thread a session, in order, through ``pipelines.appending.write`` on one autocommit connection
into a namespace of its own, timing the statement alone (the screening and the embedding text's
cut, in Python, are left out: they do not change with it); it reports the median and p95 of one
statement and the total. Each round then sends the same turns again (duplicates: what an
idempotent retry costs). The machine is shared: ``--against REV`` runs, in each round, the
statement of that git revision too (into a namespace of its own, on the same database, turn for
turn alternating with this build's), so that both meet the same load."""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import RECORDING, embedded_database, log, percentile, rounded  # noqa: E402
from longmemeval import DEFAULT_DATA, load_records, unique_sessions  # noqa: E402


class Timed:
    """The connection, its statements timed (milliseconds each, in ``spent``), run as
    ``statement`` when one is given (another build's APPEND_TURN)."""

    def __init__(self, conn, statement: str | None = None) -> None:
        self.conn, self.statement, self.spent = conn, statement, []

    def execute(self, query, params=None):
        started = time.perf_counter()
        try:
            return self.conn.execute(self.statement or query, params)
        finally:
            self.spent.append((time.perf_counter() - started) * 1000)


def statement_at(revision: str) -> str:
    """APPEND_TURN as that revision wrote it."""
    source = subprocess.run(
        ["git", "show", f"{revision}:models/queries/turns.py"], capture_output=True, text=True, check=True
    ).stdout
    return re.search(r'APPEND_TURN = """(.*?)"""', source, re.S)[1]


def appended(timed: dict[str, Timed], namespace: str, turns, write, new_turn) -> None:
    """Each turn written by each build in turn (``timed``: by build), into its own namespace."""
    for t in turns:
        for build, conn in timed.items():
            turn = new_turn(
                namespace=f"{namespace}-{build}", thread_id=t.session_id, agent="bench", role=t.role,
                content=t.content, msg_id=t.msg_id,
            )  # fmt: skip
            write(conn, turn)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--against", help="a git revision whose APPEND_TURN runs beside this build's")
    args = parser.parse_args()
    sessions = unique_sessions(load_records(args.data))
    turns = [t for session in sessions.values() for t in session][: args.turns]
    with embedded_database("append-cost"):
        from sqlalchemy import text

        from models import db
        from pipelines.appending import NewTurn, write

        builds = {"this": None, **({args.against: statement_at(args.against)} if args.against else {})}
        for round_ in range(args.rounds):
            namespace = f"bench-{round_}"
            with db.session() as s:
                for build in builds:
                    s.execute(text(RECORDING), {"n": f"{namespace}-{build}"})
            with db.autocommit() as conn:
                new = {build: Timed(conn, statement) for build, statement in builds.items()}
                appended(new, namespace, turns, write, NewTurn)
                again = {build: Timed(conn, statement) for build, statement in builds.items()}
                appended(again, namespace, turns, write, NewTurn)
            for what, timed in (("new", new), ("re-sent", again)):
                for build, clock in timed.items():
                    spent = clock.spent
                    log(
                        f"round {round_} {build} {what}: {len(spent)} statements, median "
                        f"{statistics.median(spent):.3f} ms, p95 {rounded(percentile(spent, 95), 3)} ms, "
                        f"total {sum(spent) / 1000:.2f} s"
                    )


if __name__ == "__main__":
    main()
