"""Night weaving of LoomSessions (issue 12): sessions consolidated a second, and where the time goes.

What it does, on a fresh embedded PostgreSQL in a temporary LOOM_HOME (nothing else runs):

1. For each of the first ``--sessions`` questions of the LongMemEval file, its sessions are
   concatenated into one conversation (each turn at its session's date) and appended through
   conversation.append in this process; context.pack opens the agent's LoomSession on it.
2. That is done twice, in two namespaces: one woven with an instantly answering OpenAI-compatible
   server (``tests/support/openai_server``: one episode a session, through the real openai and
   instructor client), one with the deterministic builder (no provider). For each, ``weave_night``
   requests the runs and each run is delivered to the stage's actor in this process, one after
   another (one worker thread; no broker: the wake-ups are skipped).
3. Reports, per mode: sessions/s, turns read/s, and the share of the wall time spent in database
   statements (SQLAlchemy's cursor events) and in the model call.

Progress goes to stderr; the last stdout line is one JSON object. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Clock, embedded_database, log, timed_asks, without_broker  # noqa: E402
from longmemeval import DEFAULT_DATA, load_records  # noqa: E402


def said_at(date: str) -> datetime:
    return datetime.strptime(date.split(" (")[0] + date.split(")")[-1], "%Y/%m/%d %H:%M").astimezone()


def build(namespace: str, records: list[dict]) -> int:
    """Each record's sessions as one conversation with a LoomSession on it; the turns appended."""
    from ops.caller import OPERATOR
    from ops.registry import call

    call("conversation.set_logging", OPERATOR, {"namespace": namespace, "enabled": True})
    turns = 0
    for record in records:
        thread = record["question_id"]
        for date, session in zip(record["haystack_dates"], record["haystack_sessions"], strict=True):
            start = said_at(date)
            for i, turn in enumerate(session):
                body = {
                    "namespace": namespace,
                    "thread_id": thread,
                    "role": turn["role"],
                    "content": turn["content"],
                    "agent": "assistant",
                    "user_id": "user",
                    "ts": (start + timedelta(seconds=i)).isoformat(),
                }
                turns += call("conversation.append", OPERATOR, body)["stored"]
        call("context.pack", OPERATOR, {"namespace": namespace, "thread_id": thread, "agent": "assistant"})
    return turns


def weave(namespace: str, clock: Clock) -> dict:
    from ops.caller import OPERATOR
    from ops.registry import call
    from providers import llm
    from schedules.night_weaving import weave_night
    from workers import ledger, stages

    loom = call("looms.list", OPERATOR, {"namespace": namespace})["looms"][0]["id"]
    started, db_before = time.perf_counter(), clock.db
    with timed_asks(llm, "get_llm") as model:
        runs = weave_night(loom, by="operator")
        work = stages.body(stages.get("night_weaving"))
        for run_id in runs:
            work([run_id])
    wall = time.perf_counter() - started
    done = ledger.runs_by_id(runs)
    results = [run.result or {} for run in done]
    return {
        "sessions": len(runs),
        "statuses": sorted({run.status for run in done}),
        "episodes": sum(r.get("episodes", 0) for r in results),
        "wall_s": round(wall, 2),
        "sessions_per_s": round(len(runs) / wall, 1),
        "db_share": round((clock.db - db_before) / wall, 3),
        "model_share": round(model["seconds"] / wall, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep-home", action="store_true")
    args = parser.parse_args()

    without_broker()  # the runs are delivered here
    records = load_records(args.data)[: args.sessions]
    out: dict = {"sessions": len(records)}
    with embedded_database("night", args.keep_home):
        from models import db
        from models.settings import get_settings
        from providers import llm
        from tests.support.openai_server import FakeOpenAI

        clock = Clock()
        clock.attach(db.get_engine())
        for name in ("llm", "builder"):
            started = time.perf_counter()
            out[f"turns_{name}"] = build(f"bench-{name}", records)
            log(f"{name}: {out[f'turns_{name}']:,} turns appended in {time.perf_counter() - started:.1f} s")
        server = FakeOpenAI().start()
        server.reply = lambda request: {
            "episodes": [{"content": "The user and the assistant talked it over.", "lines": [1]}]
        }
        try:
            os.environ.update(LOOM_LLM_PROVIDER="openai", LOOM_LLM_BASE_URL=server.base_url)
            get_settings.cache_clear()
            llm.reset_llm()
            out["llm"] = weave("bench-llm", clock)
            log(f"llm: {out['llm']}")
        finally:
            server.stop()
        os.environ["LOOM_LLM_PROVIDER"] = "fake"
        get_settings.cache_clear()
        llm.reset_llm()
        out["builder"] = weave("bench-builder", clock)
        log(f"builder: {out['builder']}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
