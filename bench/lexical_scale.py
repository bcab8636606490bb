"""The lexical leg (BM25 in PostgreSQL) at scale: ``pipelines.search.by_lexical`` over 1,000,000
turns, for the candidate budgets of ``pipelines.lexical``.

    .venv/bin/python bench/lexical_scale.py [--turns 1000000] [--queries 30] [--budgets 0,20000,5000]

What it does, on a fresh embedded PostgreSQL in a temporary LOOM_HOME (nothing else runs):

1. Loads N synthetic turns with COPY, built as ``bench/substring.py`` builds them (1 to 8 real
   LongMemEval sentences a turn; ``acme`` holds half of them, ``ns-07`` 1 %), with the GIN index of
   migration 0017 built after the load.
2. Asks ``--queries`` LongMemEval questions through ``by_lexical`` (limit 50, as the hybrid mode's
   pool) in the ``acme`` and ``ns-07`` scopes, for each ``CANDIDATE_BUDGET`` given (0: no budget,
   every word below the common cut brings candidates, as before the budget), after one untimed
   pass: p50/p95 in milliseconds and the turns the query's words bring (counted apart).

Recall cannot be measured on synthetic turns; the budget's effect on recall is measured on the
LongMemEval file (bench/README.md). Progress goes to stderr; the last stdout line is one JSON
object. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import psycopg  # noqa: E402
from harness import embedded_database, log, percentile, rounded  # noqa: E402
from longmemeval import DEFAULT_DATA, load_records  # noqa: E402
from substring import load, planted_codes, sentences  # noqa: E402

SCOPES = ("acme", "ns-07")
GIN = (  # migration 0017's
    "CREATE INDEX ix_turns_namespace_lexemes ON turns USING gin (namespace, lexemes) "
    "WHERE role IN ('user', 'assistant') AND deleted_at IS NULL AND sensitivity <> 'high'"
)


def time_budget(questions: list[str], budget: int) -> dict:
    from models import db
    from pipelines import lexical, search

    lexical.CANDIDATE_BUDGET = budget or 10**12
    results = {}
    for scope in SCOPES:
        filters = search.Filters([scope])
        times = []
        for timed in (False, True):
            for question in questions:
                started = time.perf_counter()
                with db.session() as s:
                    search.by_lexical(s, question, filters, 50)
                if timed:
                    times.append((time.perf_counter() - started) * 1000)
        results[scope] = {
            "p50_ms": rounded(statistics.median(times), 1),
            "p95_ms": rounded(percentile(times, 95), 1),
        }
        log(f"  budget {budget or 'none'}, {scope}: {results[scope]}")
    return results


def brought(questions: list[str], budget: int) -> dict:
    """Per scope, the median and p95 of the turns holding the words ``lexical.bringing`` chooses."""
    from sqlalchemy import text

    from models import db
    from models.queries.search import INDEXED_TURNS
    from pipelines import lexical

    lexical.CANDIDATE_BUDGET = budget or 10**12
    counts: dict[str, list[int]] = {scope: [] for scope in SCOPES}
    with db.session() as s:
        for question in questions:
            lexemes = list(dict.fromkeys(lexical.query_lexemes(s, question)))
            for scope in SCOPES:
                n = lexical.corpus(s, [scope]).n
                dfs = lexical.frequencies(s, lexemes, "t.namespace = :ns", {"ns": scope}, n)
                chosen = lexical.bringing(dfs, n) if dfs else []
                holders = s.execute(
                    text(
                        f"SELECT count(*) FROM turns t WHERE t.namespace = :ns AND {INDEXED_TURNS} "
                        "AND t.lexemes @@ (SELECT string_agg(quote_literal(l), ' | ')::tsquery "
                        "FROM unnest(CAST(:chosen AS text[])) l)"
                    ),
                    {"ns": scope, "chosen": chosen},
                ).scalar()
                counts[scope].append(holders)
    return {
        scope: {"p50": statistics.median(values), "p95": rounded(percentile(values, 95), 0)}
        for scope, values in counts.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--budgets", default="0,20000,5000")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep-home", action="store_true")
    args = parser.parse_args()

    from models import db

    rng = random.Random(args.seed)
    out: dict = {"turns": args.turns}
    with embedded_database("lexical", args.keep_home) as url:
        with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
            out["postgres"] = conn.execute("SHOW server_version").fetchone()[0]
            conn.execute("DROP INDEX ix_turns_content_trgm")  # not read here; the load is faster
            conn.execute("DROP INDEX ix_turns_namespace_lexemes")
            corpus = sentences(args.data)
            log(f"loading {args.turns:,} turns")
            out["load_s"] = round(load(conn, args.turns, corpus, planted_codes(rng), rng), 1)
            started = time.perf_counter()
            conn.execute("SET maintenance_work_mem = '2GB'")
            conn.execute(GIN)
            conn.execute("ANALYZE turns")
            out["gin_build_s"] = round(time.perf_counter() - started, 1)
        db.reset_engine()
        questions = [r["question"] for r in load_records(args.data)]
        rng.shuffle(questions)
        questions = questions[: args.queries]
        budgets = [int(b) for b in args.budgets.split(",")]
        out["budgets"] = {
            str(b): {"ms": time_budget(questions, b), "turns_brought": brought(questions, b)} for b in budgets
        }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
