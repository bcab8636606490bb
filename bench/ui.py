"""The dashboard's page render times with 100,000 turns and 10,000 stage runs in the database.

    .venv/bin/python bench/ui.py [--turns 100000] [--runs 10000] [--rounds 30]

On a fresh embedded PostgreSQL in a temporary LOOM_HOME (nothing else runs):

1. COPY ``--turns`` turns of LongMemEval text into 1,000 threads a 100 turns across 5 namespaces
   (one turn in 50 high: masked on its page), said over the last 30 days; their keys and threads
   rows as the write path leaves them; ``--runs`` stage runs of every stage and status (1 in 10
   failed, with an error); 20 briefs of two revisions through ``session.brief_save``.
2. Signs in to the dashboard with an all-namespaces admin token and GETs each page ``--rounds``
   times (after one untimed round) through the real ASGI app in this process (``TestClient``:
   routing, the session lookup, the ops, the templates; not a socket), p50 / p95 in ms. The
   search page searches in lexical mode (the hybrid mode adds the query's embedding, measured in
   bench/retrieval.py). The broker is absent: the health page shows it down, as it would.

Progress goes to stderr; the last stdout line is one JSON object. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

# The project's root before this directory: `import ui` is the dashboard's package, not this file.
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from harness import embedded_database, log, percentile, rounded, without_broker  # noqa: E402
from longmemeval import DEFAULT_DATA, load_records  # noqa: E402

NAMESPACES = [f"team-{i}" for i in range(5)]
STAGES = ("embedding", "screening", "compaction", "title", "extraction", "night_weaving", "brief_window")
STATUSES = ("succeeded",) * 7 + ("skipped", "pending", "failed")
SECRET = "the prod db password=Xk29!aPq7vR, keep it safe"


def sentences(data: Path) -> list[str]:
    texts = [t["content"] for r in load_records(data) for session in r["haystack_sessions"] for t in session]
    return [t[:1_500] for t in texts if t.strip()]


def load(turns: int, runs: int, corpus: list[str]) -> None:
    from models import db, partitions

    rng, now = random.Random(11), datetime.now(UTC)
    per_thread = 100
    threads = max(turns // per_thread, 1)
    with db.autocommit() as conn:
        for back in range(3):  # the monthly partitions the last 30 days fall in
            partitions.ensure(conn, (now - timedelta(days=30 * back)).replace(day=1))
        columns = "namespace, thread_id, agent, msg_id, role, content, metadata, sensitivity, ts, seq"
        with conn.cursor() as cur, cur.copy(f"COPY turns ({columns}) FROM STDIN") as copy:
            for t in range(threads):
                start = now - timedelta(days=30) + timedelta(seconds=rng.randrange(29 * 86_400))
                for i in range(per_thread):
                    text = SECRET if rng.random() < 0.02 else rng.choice(corpus)
                    copy.write_row(
                        (
                            NAMESPACES[t % len(NAMESPACES)],
                            f"thread-{t}",
                            "default",
                            f"m{i}",
                            "user" if i % 2 == 0 else "assistant",
                            text,
                            "{}",
                            "high" if text == SECRET else "none",
                            start + timedelta(minutes=i),
                            i + 1,
                        )
                    )
        conn.execute(
            "INSERT INTO turn_keys (namespace, thread_id, agent, msg_id, turn_id, ts) "
            "SELECT namespace, thread_id, agent, msg_id, id, ts FROM turns"
        )
        conn.execute(
            "INSERT INTO threads (namespace, thread_id, agent, title, metadata, turn_count, last_seq, "
            "created_at, last_turn_at) SELECT namespace, thread_id, 'default', 'Thread ' || thread_id, "
            "'{}', count(*), max(seq), min(ts), max(ts) FROM turns GROUP BY namespace, thread_id"
        )
        conn.execute(
            "INSERT INTO namespaces (name, conversation_logging_enabled, created_at, updated_at) "
            "SELECT unnest(%s::text[]), true, now(), now()",
            (NAMESPACES,),
        )
        columns = (
            "stage, subject, idem_key, status, attempts, last_error, created_at, updated_at, available_at"
        )
        with conn.cursor() as cur, cur.copy(f"COPY stage_runs ({columns}) FROM STDIN") as copy:
            for n in range(runs):
                status, at = rng.choice(STATUSES), now - timedelta(seconds=rng.randrange(7 * 86_400))
                error = "EmbedderUnavailable: connection refused" if status == "failed" else None
                stage = rng.choice(STAGES)
                copy.write_row((stage, f"turn:{n}", f"bench:{n}", status, 1, error, at, at, at))
        conn.execute("VACUUM ANALYZE")


def briefs() -> None:
    from ops.caller import OPERATOR
    from ops.registry import call

    for n in range(20):
        for status in ("tests red", "tests green"):
            body = {
                "namespace": NAMESPACES[0],
                "brief_key": f"session/s{n}",
                "sections": {"goal": f"Ship change {n}", "status": status, "next_steps": ["deploy", "watch"]},
            }
            call("session.brief_save", OPERATOR, body)


def pages() -> dict[str, str]:
    ns = NAMESPACES[0]
    return {
        "conversations": "/ui/conversations",
        "threads": f"/ui/threads?namespace={ns}",
        "thread (100 turns)": f"/ui/thread?namespace={ns}&thread_id=thread-0",
        "search (lexical)": f"/ui/search?query=favorite+restaurant+ideas&namespace={ns}&mode=lexical",
        "briefs": f"/ui/briefs?namespace={ns}",
        "brief": f"/ui/brief?namespace={ns}&key=session/s0",
        "stage runs": "/ui/runs",
        "failed runs": "/ui/runs?status=failed",
        "run": "/ui/runs/1",
        "nights": "/ui/nights",
        "looms": f"/ui/looms?namespace={ns}",
        "health": "/ui/health",
    }


def measure(rounds: int) -> dict:
    from fastapi.testclient import TestClient

    from api.app import create_app
    from ops.caller import create_token

    token = create_token([], "admin", all_namespaces=True)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line a request otherwise
    logging.getLogger("mcp").setLevel(logging.WARNING)
    out = {}
    with TestClient(create_app(warm_embedder=False), base_url="http://bench.test") as client:
        client.headers["Origin"] = "http://bench.test"  # as a browser's form posts carry it
        signed = client.post("/ui/login", data={"token": token}, follow_redirects=False)
        assert signed.status_code == 303, signed.text
        for name, path in pages().items():
            times = []
            for round_ in range(rounds + 1):
                started = time.perf_counter()
                answer = client.get(path)
                elapsed = (time.perf_counter() - started) * 1000
                assert answer.status_code == 200, (path, answer.text[:500])
                if round_:
                    times.append(elapsed)
            out[name] = {"p50": rounded(percentile(times, 50)), "p95": rounded(percentile(times, 95))}
            log(f"{name}: {out[name]}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep-home", action="store_true")
    args = parser.parse_args()
    without_broker()  # the health page shows it down, as it would
    os.environ["LOOM_SESSION_BRIEF_LLM"] = "off"
    corpus = sentences(args.data)
    with embedded_database("ui", args.keep_home):
        started = time.perf_counter()
        load(args.turns, args.runs, corpus)
        briefs()
        log(f"loaded {args.turns:,} turns and {args.runs:,} runs in {time.perf_counter() - started:.0f} s")
        timings = measure(args.rounds)
    worst = max(v["p95"] for v in timings.values())
    print(json.dumps({"turns": args.turns, "runs": args.runs, "pages": timings, "worst_p95_ms": worst}))


if __name__ == "__main__":
    main()
