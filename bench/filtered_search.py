"""The vector leg restricted to a scope at scale: ``pipelines.search.by_vector`` for a 1,000-turn
namespace beside a 1,000,000-turn one, against an exact scan of the same scope.

    .venv/bin/python bench/filtered_search.py [--big 1000000] [--queries 50] [--seed 7] [--keep-home]

What it does, on a fresh embedded PostgreSQL in a temporary LOOM_HOME (nothing else runs):

1. Migrates to head and drops the HNSW index, then loads turns and their embeddings with COPY:
   ``big`` (``--big`` turns), ``mid`` (the largest scope searched exactly, ``EXACT_SCAN_ROWS``:
   20,000 when the figures below were measured, 40,000 since issue 37) and ``small`` (1,000),
   threads of 100 turns, roles alternating. What is measured is the index and the plan, not the
   embedder: the vectors are synthetic, 384 wide, drawn around 2,000 random centres (a centre plus
   Gaussian noise of the same norm, so that neighbours share a topic as embeddings of related text
   do); every namespace draws from the same centres.
2. Builds the HNSW index with the migration's definition (maintenance_work_mem 4 GB) and ANALYZEs.
3. For each scope (``small``, ``small`` assistant turns, ``mid``, ``big``, one thread of ``big``)
   and each plan, runs ``--queries`` queries (a centre plus noise) through ``by_vector`` (limit 10,
   no similarity floor) after one untimed pass: ``chosen`` is the plan ``by_vector`` picks,
   ``index`` its index branch forced (``EXACT_SCAN_ROWS`` = 0: the query ordered by distance, the
   planner's choice of path), ``exact`` the scan of every vector in scope (``EXACT_SCAN_ROWS``
   above the scope's size), which is also the truth recall@10 is measured against.

Progress goes to stderr; the last stdout line is one JSON object. Not part of the test suite.

Measured at 1,000,000 + 20,000 + 1,000 turns (2-core KVM, PostgreSQL 18.6; load 79 s, HNSW build
308 s with maintenance_work_mem 4 GB, index 1,994 MB), 50 queries, p50 / p95 ms and recall@10:

    scope               chosen                index branch          exact scan
    small (1,000)       2.8 / 2.9    1.000    2.8 / 3.1    1.000    2.8 / 3.1
    small, assistant    2.7 / 2.9    1.000    2.4 / 6.3    1.000    2.6 / 2.8
    mid (20,000)        21.8 / 23.9  1.000    58.1 / 86.3  1.000    21.4 / 28.6
    big (1,000,000)     5.3 / 7.8    0.608    4.0 / 5.2    0.608    1,732 / 2,480
    a thread of big     1.7 / 1.8    1.000    1.6 / 1.8    1.000    1.9 / 2.2

Every scope of up to 20,000 messages gets its exact top 10. The index branch, given the embedding
rows' own namespace column, is read through the btree for the small namespace too, but only while
the planner's estimate says so; the chosen plan does not depend on it. The big namespace's 0.608 is
HNSW's own recall on these vectors (ef_search 40; isotropic noise in 384 dimensions is harder for a
graph than real embeddings, which lie near a space of few dimensions); counting its scope costs
1.3 ms (5.3 against 4.0).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import psycopg  # noqa: E402
from harness import embedded_database, index_definitions, log, percentile, rounded  # noqa: E402

from models.queries.search import VECTOR_INDEX  # noqa: E402

DIMS, CENTRES, THREAD_TURNS = 384, 2_000, 100
MODEL = "synthetic"


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def draws(rng: np.random.Generator, centres: np.ndarray, n: int) -> np.ndarray:
    picked = centres[rng.integers(0, len(centres), n)]
    return unit(picked + unit(rng.standard_normal((n, DIMS))) * 1.0).astype(np.float32)


def load(conn: psycopg.Connection, sizes: dict[str, int], centres: np.ndarray, rng) -> float:
    from pgvector.psycopg import register_vector

    register_vector(conn)
    started = time.perf_counter()
    now = datetime.now(UTC)
    turn_id = 0
    for namespace, n in sizes.items():
        log(f"  loading {n:,} turns into {namespace}")
        with conn.cursor() as cur:
            columns = "id, namespace, thread_id, agent, msg_id, role, content, metadata, sensitivity, ts"
            with cur.copy(f"COPY turns ({columns}) FROM STDIN") as copy:
                for i in range(n):
                    role = ("user", "assistant")[i % 2]
                    copy.write_row(
                        (
                            turn_id + i + 1,
                            namespace,
                            f"t{i // THREAD_TURNS}",
                            "a",
                            f"m{i}",
                            role,
                            f"synthetic turn {i}",
                            "{}",
                            "none",
                            now,
                        )
                    )
            columns = (
                "turn_id, namespace, thread_id, agent, msg_id, role, text, digest, model, vector, created_at"
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
                        "text",
                        "varchar",
                        "varchar",
                        "vector",
                        "timestamptz",
                    ]
                )
                for start in range(0, n, 50_000):
                    block = draws(rng, centres, min(50_000, n - start))
                    for j, vector in enumerate(block):
                        i = start + j
                        copy.write_row(
                            (
                                turn_id + i + 1,
                                namespace,
                                f"t{i // THREAD_TURNS}",
                                "a",
                                f"m{i}",
                                ("user", "assistant")[i % 2],
                                f"synthetic turn {i}",
                                f"d{i}",
                                MODEL,
                                vector,
                                now,
                            )
                        )
        turn_id += n
    conn.execute("SELECT setval(pg_get_serial_sequence('turns', 'id'), %s)", (turn_id,))
    conn.execute("UPDATE embeddings SET embedded_at = created_at")
    return time.perf_counter() - started


def run_plan(queries: np.ndarray, scope, exact_rows: int | None) -> tuple[list[list[str]], list[float]]:
    from models import db
    from pipelines import search

    chosen = search.EXACT_SCAN_ROWS
    if exact_rows is not None:
        search.EXACT_SCAN_ROWS = exact_rows
    try:
        found, times = [], []
        for timed in (False, True):
            for q in queries:
                started = time.perf_counter()
                with db.session() as s:
                    hits = search.by_vector(s, q.tolist(), MODEL, scope, 10, -1.0)
                if timed:
                    times.append((time.perf_counter() - started) * 1000)
                    found.append([h.msg_id for h in hits])
        return found, times
    finally:
        search.EXACT_SCAN_ROWS = chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep-home", action="store_true")
    args = parser.parse_args()

    from models import db
    from pipelines import search

    rng = np.random.default_rng(args.seed)
    centres = unit(rng.standard_normal((CENTRES, DIMS)))
    sizes = {"big": args.big, "mid": search.EXACT_SCAN_ROWS, "small": 1_000}
    out: dict = {"sizes": sizes, "exact_scan_rows": search.EXACT_SCAN_ROWS}
    with embedded_database("filtered", args.keep_home) as url:
        with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
            out["postgres"] = conn.execute("SHOW server_version").fetchone()[0]
            (hnsw,) = index_definitions(conn, [VECTOR_INDEX]).values()
            conn.execute(f"DROP INDEX {VECTOR_INDEX}")
            out["load_s"] = round(load(conn, sizes, centres, rng), 1)
            log("building the HNSW index")
            started = time.perf_counter()
            conn.execute("SET maintenance_work_mem = '4GB'")
            conn.execute(hnsw)
            out["index_build_s"] = round(time.perf_counter() - started, 1)
            conn.execute("VACUUM ANALYZE turns")
            conn.execute("VACUUM ANALYZE embeddings")
            out["index_mb"] = round(
                conn.execute("SELECT pg_relation_size(%s)", (VECTOR_INDEX,)).fetchone()[0] / 2**20
            )
        db.reset_engine()
        queries = draws(rng, centres, args.queries)
        scopes = {
            "small": search.Filters(["small"]),
            "small_assistant": search.Filters(["small"], role="assistant"),
            "mid": search.Filters(["mid"]),
            "big": search.Filters(["big"]),
            "big_thread": search.Filters(["big"], thread_id="t42"),
        }
        results = {}
        for name, scope in scopes.items():
            log(f"scope {name}")
            truth, exact_ms = run_plan(queries, scope, 10**9)
            results[name] = {"exact": timing(exact_ms)}
            for plan, rows in (("chosen", None), ("index", 0)):
                found, ms = run_plan(queries, scope, rows)
                recall = statistics.mean(
                    len(set(f) & set(t)) / len(t) for f, t in zip(found, truth, strict=True) if t
                )
                results[name][plan] = {**timing(ms), "recall_at_10": round(recall, 3)}
            log(f"  {results[name]}")
        out["scopes"] = results
    print(json.dumps(out))


def timing(ms: list[float]) -> dict:
    return {"p50_ms": rounded(statistics.median(ms), 1), "p95_ms": rounded(percentile(ms, 95), 1)}


if __name__ == "__main__":
    main()
