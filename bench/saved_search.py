"""conversation.search_saved_messages for a user with 10,000 saved messages: p50/p95 per mode.

    .venv/bin/python bench/saved_search.py [--saved 10000] [--others 100000] [--queries 100] [--keep-home]

What it does, on a fresh embedded PostgreSQL in a temporary LOOM_HOME (nothing else runs):

1. Loads, with COPY, ``--saved`` turns saved by user ``ana`` and ``--others`` turns of the same
   namespace that are not hers (a fifth saved by 50 other users, the rest recorded, unowned), all real
   LongMemEval turns (cut at 4,000 characters), one thread per session. Ana's messages get real
   vectors from the configured embedder (the local MiniLM by default), written as the embedding
   stage writes them; the others get vectors copied from hers, since only her rows are searched
   and what matters of theirs is that the index and tables hold them.
2. Asks ``--queries`` LongMemEval questions through the op itself (``ops.registry.call``, so the
   query's embedding, both legs, the fusion and the excerpts are in the time), once untimed, then
   timed, in each mode; p50/p95 in milliseconds, and the candidates per leg.

Progress goes to stderr; the last stdout line is one JSON object. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import psycopg  # noqa: E402
from harness import embedded_database, index_definitions, log, percentile, rounded  # noqa: E402
from longmemeval import DEFAULT_DATA, load_records, unique_sessions  # noqa: E402

from models.queries.search import VECTOR_INDEX  # noqa: E402

NS, USER = "bench-saved", "ana"


def turns(data: Path) -> list[tuple[str, str, str]]:
    """(thread, role, content) of every LongMemEval user and assistant turn, in session order."""
    found = []
    for session, session_turns in unique_sessions(load_records(data)).items():
        found += [
            (session, t.role, t.content[:4000]) for t in session_turns if t.role in ("user", "assistant")
        ]
    return found


def load(
    conn: psycopg.Connection, rows: list[tuple[str, str, str]], owners: list[str | None], vectors
) -> None:
    from pgvector.psycopg import register_vector

    from models.settings import get_settings
    from pipelines import keys
    from providers.embedders import configured_model

    register_vector(conn)
    now, cut, model = datetime.now(UTC), get_settings().embed_max_chars, configured_model()
    with conn.cursor() as cur:
        columns = (
            "id, namespace, thread_id, agent, msg_id, role, content, user_id, metadata, sensitivity, ts, "
            "is_saved, saved_at"
        )
        with cur.copy(f"COPY turns ({columns}) FROM STDIN") as copy:
            for i, ((thread, role, content), owner) in enumerate(zip(rows, owners, strict=True)):
                saved = owner is not None
                copy.write_row(
                    (
                        i + 1,
                        NS,
                        thread,
                        "default",
                        f"m{i}",
                        role,
                        content,
                        owner,
                        "{}",
                        "none",
                        now,
                        saved,
                        now if saved else None,
                    )
                )
        columns = (
            "turn_id, namespace, thread_id, agent, msg_id, role, user_id, text, digest, model, vector, "
            "created_at, embedded_at, is_saved, saved_at"
        )
        with cur.copy(f"COPY embeddings ({columns}) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(
                [
                    "bigint",
                    "varchar",
                    "varchar",
                    "varchar",
                    "varchar",
                    "varchar",
                    "varchar",
                    "text",
                    "varchar",
                    "varchar",
                    "vector",
                    "timestamptz",
                    "timestamptz",
                    "bool",
                    "timestamptz",
                ]
            )
            for i, ((thread, role, content), owner) in enumerate(zip(rows, owners, strict=True)):
                saved = owner is not None
                text = content[:cut]
                copy.write_row(
                    (
                        i + 1,
                        NS,
                        thread,
                        "default",
                        f"m{i}",
                        role,
                        owner,
                        text,
                        keys.digest(text),
                        model,
                        vectors[i % len(vectors)],
                        now,
                        now,
                        saved,
                        now if saved else None,
                    )
                )
    conn.execute("SELECT setval(pg_get_serial_sequence('turns', 'id'), %s)", (len(rows),))
    conn.execute(
        "INSERT INTO namespaces (name, conversation_logging_enabled, created_at, updated_at) "
        "VALUES (%s, true, now(), now())",
        (NS,),
    )
    conn.execute("VACUUM ANALYZE turns")
    conn.execute("VACUUM ANALYZE embeddings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--saved", type=int, default=10_000)
    parser.add_argument("--others", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep-home", action="store_true")
    args = parser.parse_args()

    from models import db
    from models.settings import get_settings
    from ops.caller import OPERATOR
    from ops.registry import call
    from providers.embedders import get_embedder

    rng = random.Random(args.seed)
    every = turns(args.data)
    pool = [every[i % len(every)] for i in range(args.saved + args.others)]
    rng.shuffle(pool)
    others = [f"user-{k}" for k in range(50)]
    owners = [USER] * args.saved + [
        rng.choice(others) if rng.random() < 0.2 else None for _ in range(args.others)
    ]
    out: dict = {"saved": args.saved, "others": args.others}
    log(f"embedding {args.saved:,} saved messages")
    started = time.perf_counter()
    embedder = get_embedder()
    cut = get_settings().embed_max_chars
    vectors = []
    for start in range(0, args.saved, 64):
        vectors += embedder.embed([content[:cut] for _, _, content in pool[start : start + 64]])
    out["embed_s"] = round(time.perf_counter() - started, 1)
    with embedded_database("saved", args.keep_home) as url:
        with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
            out["postgres"] = conn.execute("SHOW server_version").fetchone()[0]
            started = time.perf_counter()
            (hnsw,) = index_definitions(conn, [VECTOR_INDEX]).values()
            conn.execute(f"DROP INDEX {VECTOR_INDEX}")  # built once after the load: faster
            load(conn, pool, owners, vectors)
            conn.execute("SET maintenance_work_mem = '1GB'")
            conn.execute(hnsw)
            out["load_s"] = round(time.perf_counter() - started, 1)
        db.reset_engine()
        questions = [r["question"] for r in load_records(args.data)]
        rng.shuffle(questions)
        questions = questions[: args.queries]
        results = {}
        for mode in ("hybrid", "semantic", "lexical"):
            times, candidates = [], []
            for timed in (False, True):
                for question in questions:
                    body = {"namespace": NS, "user_id": USER, "query": question, "search_mode": mode}
                    started = time.perf_counter()
                    answer = call("conversation.search_saved_messages", OPERATOR, body)
                    if timed:
                        times.append((time.perf_counter() - started) * 1000)
                        candidates.append(answer["stats"]["candidates"])
            results[mode] = {
                "p50_ms": rounded(statistics.median(times), 1),
                "p95_ms": rounded(percentile(times, 95), 1),
                "candidates_p50": {
                    leg: statistics.median(c.get(leg, 0) for c in candidates) for leg in candidates[0]
                },
            }
            log(f"  {mode}: {results[mode]}")
        out["modes"] = results
    print(json.dumps(out))


if __name__ == "__main__":
    main()
