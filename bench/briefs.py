"""Session briefs condensed from events (issue 13): events a second by the deterministic builder,
and the overhead of a window when an instantly answering LLM server revises it.

What it does, on a fresh embedded PostgreSQL in a temporary LOOM_HOME (nothing else runs):

1. For each of the first ``--saves`` questions of the LongMemEval file, its sessions become one
   save's events: each turn a ``user`` or ``assistant`` event, and after each assistant turn a
   ``read``, an ``edit`` and a ``command`` event (a coding session's shape); saved with
   session.brief_save in this process, which screens them, cuts them into windows of
   ``LOOM_SESSION_BRIEF_WINDOW_CHARS`` and stores them (the time of these saves is reported).
2. The windows' ``brief_window`` runs are delivered to the stage's actor in this process, one
   after another, as one worker thread would (no broker: the wake-ups are skipped): once with
   ``LOOM_SESSION_BRIEF_LLM=off`` (the builder), once with the model on an instantly answering
   OpenAI-compatible server (``tests/support/openai_server``, through the real openai and
   instructor client).
3. Reports, per mode: events/s and windows/s condensed, ms a window, and the share of the wall
   time in database statements (SQLAlchemy's cursor events) and in the model call.

Progress goes to stderr; the last stdout line is one JSON object. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Clock, embedded_database, log, percentile, rounded, timed_asks, without_broker  # noqa: E402
from longmemeval import DEFAULT_DATA, load_records  # noqa: E402


def events_of(record: dict) -> list[dict]:
    events = []
    for session in record["haystack_sessions"]:
        for i, turn in enumerate(session):
            events.append(
                {
                    "kind": turn["role"] if turn["role"] in ("user", "assistant") else "note",
                    "text": turn["content"],
                }
            )
            if turn["role"] == "assistant":
                path = f"src/module_{i % 7}.py"
                events += [
                    {"kind": "read", "text": "", "path": path},
                    {"kind": "edit", "text": "applied the change discussed", "path": path},
                    {
                        "kind": "command",
                        "text": "4 passed",
                        "command": f"pytest tests/test_module_{i % 7}.py",
                        "exit_code": 0,
                    },
                ]
    return events[:4_000]


def save_all(namespace: str, records: list[dict]) -> dict:
    from ops.caller import OPERATOR
    from ops.registry import call

    times, events, windows, dropped = [], 0, 0, 0
    for record in records:
        body = {
            "namespace": namespace,
            "brief_key": f"bench/{record['question_id']}",
            "events": events_of(record),
            "wait_seconds": 0,
        }
        started = time.perf_counter()
        answer = call("session.brief_save", OPERATOR, body)
        times.append((time.perf_counter() - started) * 1000)
        events += (
            answer["events"]["received"] - answer["events"]["screened_out"] - answer["events"]["dropped"]
        )
        windows += answer["windows"]["total"]
    return {
        "saves": len(records),
        "events": events,  # in windows
        "dropped": dropped,  # in windows older than the newest LOOM_SESSION_BRIEF_MAX_WINDOWS
        "windows": windows,
        "save_ms_p50": rounded(percentile(times, 50), 1),
        "save_ms_p95": rounded(percentile(times, 95), 1),
    }


def condense(clock: Clock, saved: dict) -> dict:
    """Deliver every pending brief_window run, in the order the chains request them (a delivery
    goes on with the stage's other claimable runs, as a worker thread does)."""
    from sqlmodel import select

    from models import db
    from models.base import utcnow
    from models.stage_run import PENDING, StageRun
    from providers import llm
    from workers import stages

    work = stages.body(stages.get("brief_window"))
    statuses: dict[str, int] = {}
    since = utcnow()
    started, db_before = time.perf_counter(), clock.db
    with timed_asks(llm, "get_brief_llm") as model:
        while True:
            with db.session() as s:
                pending = s.exec(
                    select(StageRun.id)
                    .where(StageRun.stage == "brief_window", StageRun.status == PENDING)
                    .limit(50)
                ).all()
            if not pending:
                break
            for run_id in pending:
                work([run_id])
    wall = time.perf_counter() - started
    with db.session() as s:
        ran = select(StageRun.status).where(StageRun.stage == "brief_window", StageRun.finished_at >= since)
        for status in s.exec(ran).all():
            statuses[status] = statuses.get(status, 0) + 1
    windows = saved["windows"]
    return {
        "statuses": statuses,
        "wall_s": round(wall, 2),
        "events_per_s": round(saved["events"] / wall, 1),
        "windows_per_s": round(windows / wall, 1),
        "ms_per_window": round(wall / windows * 1000, 1),
        "db_share": round((clock.db - db_before) / wall, 3),
        "model_share": round(model["seconds"] / wall, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--saves", type=int, default=50)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep-home", action="store_true")
    args = parser.parse_args()

    without_broker()  # the runs are delivered here
    records = load_records(args.data)[: args.saves]
    out: dict = {}
    with embedded_database("briefs", args.keep_home):
        from models import db
        from models.settings import get_settings
        from providers import llm
        from tests.support.openai_server import FakeOpenAI

        clock = Clock()
        clock.attach(db.get_engine())

        def configure(**values: str) -> None:
            os.environ.update(values)
            get_settings.cache_clear()
            llm.reset_llm()

        configure(LOOM_SESSION_BRIEF_LLM="off")
        out["saved_builder"] = save_all("bench-builder", records)
        log(f"builder saves: {out['saved_builder']}")
        out["builder"] = condense(clock, out["saved_builder"])
        log(f"builder: {out['builder']}")

        server = FakeOpenAI().start()
        server.reply = lambda request: {"status": "moving on", "new_done": ["one more step"]}
        try:
            configure(
                LOOM_SESSION_BRIEF_LLM="on", LOOM_LLM_PROVIDER="openai", LOOM_LLM_BASE_URL=server.base_url
            )
            out["saved_llm"] = save_all("bench-llm", records)
            log(f"llm saves: {out['saved_llm']}")
            out["llm"] = condense(clock, out["saved_llm"])
            log(f"llm: {out['llm']}")
        finally:
            server.stop()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
