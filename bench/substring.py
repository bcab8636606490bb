"""The substring fallback of conversation.search at scale: ``pipelines.search.by_substring`` over a
table of N turns (1,000,000 by default), without and with the trigram index of migration 0002.

    .venv/bin/python bench/substring.py [--turns 1000000] [--seed 7] [--keep-home]

What it does, on a fresh embedded PostgreSQL in a temporary LOOM_HOME (nothing else runs):

1. Migrates the database to head, then drops ``ix_turns_content_trgm`` so the load is fast.
2. Loads N synthetic turns with COPY. Their text is real: each turn is 1 to 8 sentences drawn at
   random from the LongMemEval oracle turns (``--data``), so words and lengths follow real chat.
   Namespaces are skewed (``acme`` 50 %, ``globex`` 30 %, twenty small ones 1 % each), roles
   alternate user/assistant with 4 % system/tool, 0.5 % read as high, 1 % are deleted, timestamps
   span a year. Ticket-like codes are planted: 10 codes in 20 turns each ("rare") and 10 codes in
   one ``acme`` turn each ("single").
3. Picks 50 query terms of varied rarity, 10 per class: ``common`` (a word in 5-30 % of a 50,000-turn
   sample), ``medium`` (0.1-1 %), ``rare`` and ``single`` (the planted codes), ``absent`` (codes of
   the same shape never planted, and made-up words); plus two 2-character terms (``short``: the
   trigram index cannot serve those; reported apart).
4. Times every query through the real ``by_substring`` (SQLAlchemy session, psycopg, limit 10; as a
   connection runs a statement repeatedly psycopg prepares it and PostgreSQL may plan it
   generically, as in the API) in two namespace scopes: ``acme`` (half the table) and ``ns-07``
   (1 %). Each scope gets one untimed warm-up pass, then one timed pass; p50/p95 per class and over
   the 50. ``EXPLAIN (ANALYZE, BUFFERS)`` of one query per class shows the plan.
5. Builds the index as the migrations define it (the name and predicate of 0002; a plain CREATE
   INDEX, as 0011 makes it on the table partitioned by month, which cannot be indexed
   concurrently; default maintenance_work_mem), ANALYZEs, and does step 4 again.

Progress goes to stderr; the last stdout line is one JSON object. Not part of the test suite.

Measured (2-core KVM, PostgreSQL 18.6, 1,000,000 turns of 336 characters on average, 634 MB with
their indexes; load 14 s; the index builds in 68 s and takes 328 MB), milliseconds, p50 / p95:

    scope acme (50 %)   all 50        common      medium    rare      single    absent    short
    without the index   1198 / 1864   1776/2007   1353/1461 981/1171  1116/1246 1192/1347 978/980
    with the index      3.9 / 364     345/447     37/71     3.6/4.2   1.8/2.4   1.8/8.7   1125/1126
    scope ns-07 (1 %)
    without the index   29 / 32       31/32       30/33     27/29     29/31     28/29     30/31
    with the index      3.3 / 49      21/34       32/69     3.1/3.6   1.5/2.0   1.8/8.3   47/59

Without the index every query is a parallel scan of the table (of the namespace's rows through
the unique index when the namespace is small); with it, every term of 3+ characters is a bitmap
scan of ``ix_turns_content_trgm``. A common word still costs a few hundred milliseconds: every
matching turn is read to sort by time. Two-character terms cannot use the index and cost what
they cost before (before by_substring forced per-call plans, a generic plan walked the whole index
for them: 3.3 s).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import psycopg  # noqa: E402
from harness import embedded_database, log, percentile, rounded  # noqa: E402
from longmemeval import DEFAULT_DATA, load_records, unique_sessions  # noqa: E402

MIGRATION = ROOT / "models" / "migrations" / "versions" / "0002_substring_index.py"
SCOPES = {"acme": ["acme"], "ns-07": ["ns-07"]}
CLASSES = ("common", "medium", "rare", "single", "absent")
SMALL = [f"ns-{i:02d}" for i in range(20)]
SENTENCES_A_TURN = (1, 1, 2, 2, 3, 3, 4, 5, 6, 8)  # drawn uniformly: 3.5 on average


def migration():
    spec = importlib.util.spec_from_file_location("substring_index_migration", MIGRATION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the data --------------------------------------------------------------------------------------


def sentences(data: Path) -> list[str]:
    found = []
    for turns in unique_sessions(load_records(data)).values():
        for turn in turns:
            for sentence in re.split(r"(?<=[.!?])\s+|\n+", turn.content):
                sentence = sentence.strip()
                if 20 <= len(sentence) <= 400:
                    found.append(sentence)
    return found


def planted_codes(rng: random.Random) -> dict[str, list[str]]:
    def codes(prefix: str, count: int) -> list[str]:
        return [f"{prefix}-{rng.randrange(100_000, 999_999)}" for _ in range(count)]

    return {
        "rare": codes("BILL", 10),
        "single": codes("INC", 10),
        "absent": codes("PAY", 6) + ["quuxification", "flambergast", "zorbulated", "invoicerator"],
    }


def turn_rows(n: int, corpus: list[str], codes: dict[str, list[str]], rng: random.Random):
    """(namespace, thread_id, agent, msg_id, role, content, metadata, sensitivity, ts, deleted_at)"""
    plant: dict[int, str] = {}
    for code in codes["rare"]:
        for index in rng.sample(range(n), 20):
            plant[index] = code
    acme_rows = [i for i in range(n) if i % 2 == 0]  # namespace_of(i) puts every even row in acme
    for code in codes["single"]:
        plant[rng.choice(acme_rows)] = code
    start = datetime(2025, 1, 1, tzinfo=UTC)
    step = timedelta(days=365) / n
    for i in range(n):
        namespace = namespace_of(i, rng)
        thread = f"thread-{i // 12}"
        role = ("user", "assistant")[i % 2] if rng.random() >= 0.04 else rng.choice(("system", "tool"))
        parts = rng.choices(corpus, k=rng.choice(SENTENCES_A_TURN))
        if i in plant:
            parts.insert(rng.randrange(len(parts) + 1), f"See {plant[i]} for the details.")
        content = " ".join(parts)
        sensitivity = "high" if rng.random() < 0.005 else "none"
        ts = start + step * i
        deleted = ts + timedelta(days=1) if rng.random() < 0.01 else None
        yield namespace, thread, "default", f"m{i}", role, content, "{}", sensitivity, ts, deleted


def namespace_of(i: int, rng: random.Random) -> str:
    if i % 2 == 0:
        return "acme"
    pick = rng.random()
    return "globex" if pick < 0.6 else SMALL[int((pick - 0.6) / 0.4 * len(SMALL))]


def load(conn: psycopg.Connection, n: int, corpus: list[str], codes: dict, rng: random.Random) -> float:
    from models import partitions

    started = time.perf_counter()
    for month in range(13):  # the turns span 2025, in monthly partitions (migration 0011)
        partitions.ensure(conn, datetime(2025 + month // 12, month % 12 + 1, 1, tzinfo=UTC))
    columns = "namespace, thread_id, agent, msg_id, role, content, metadata, sensitivity, ts, deleted_at"
    with conn.cursor() as cur, cur.copy(f"COPY turns ({columns}) FROM STDIN") as copy:
        for count, row in enumerate(turn_rows(n, corpus, codes, rng), 1):
            copy.write_row(row)
            if count % 200_000 == 0:
                log(f"  {count:,} turns copied")
    conn.execute("VACUUM ANALYZE turns")
    return time.perf_counter() - started


def query_terms(corpus: list[str], codes: dict, rng: random.Random) -> dict[str, list[str]]:
    """Words whose share of turns in a sample of generated turns puts them in a class."""
    sample = [" ".join(rng.choices(corpus, k=rng.choice(SENTENCES_A_TURN))).lower() for _ in range(50_000)]
    df: dict[str, int] = {}
    for text in sample:
        for word in set(re.findall(r"[a-z]{4,}", text)):
            df[word] = df.get(word, 0) + 1

    def between(low: float, high: float) -> list[str]:
        words = sorted(w for w, c in df.items() if low <= c / len(sample) <= high)
        return rng.sample(words, 10)

    return {
        "common": between(0.05, 0.30),
        "medium": between(0.001, 0.01),
        "rare": codes["rare"],
        "single": codes["single"],
        "absent": codes["absent"],
        "short": ["ok", "db"],
    }


# --- timing ----------------------------------------------------------------------------------------


def time_queries(terms: dict[str, list[str]]) -> dict:
    from models import db
    from pipelines.search import Filters, by_substring

    results: dict = {}
    for scope, namespaces in SCOPES.items():
        filters = Filters(namespaces)
        timings: dict[str, list[float]] = {}
        hits: dict[str, list[int]] = {}
        for timed in (False, True):
            for cls, words in terms.items():
                for word in words:
                    started = time.perf_counter()
                    with db.session() as s:
                        found = by_substring(s, word, filters, 10)
                    elapsed = (time.perf_counter() - started) * 1000
                    if timed:
                        timings.setdefault(cls, []).append(elapsed)
                        hits.setdefault(cls, []).append(len(found))
        main = [ms for cls in CLASSES for ms in timings[cls]]
        results[scope] = {
            "all_50": summary(main),
            **{cls: {**summary(timings[cls]), "hits": hits[cls]} for cls in terms},
        }
        overall = results[scope]["all_50"]
        log(f"  {scope}: p50 {overall['p50_ms']} ms, p95 {overall['p95_ms']} ms")
    return results


def summary(values: list[float]) -> dict:
    return {
        "p50_ms": rounded(statistics.median(values), 2),
        "p95_ms": rounded(percentile(values, 95), 2),
        "max_ms": rounded(max(values), 2),
    }


def explain(terms: dict[str, list[str]]) -> dict:
    """EXPLAIN ANALYZE of by_substring's own statement, one term per class, in the acme scope."""
    from sqlalchemy import event

    from models import db
    from pipelines.search import Filters, by_substring

    plans = {}
    engine = db.get_engine()
    for cls, words in terms.items():
        seen = []

        def capture(conn, cursor, statement, parameters, context, executemany, seen=seen):
            seen.append((statement, parameters))

        event.listen(engine, "before_cursor_execute", capture)
        try:
            with db.session() as s:
                by_substring(s, words[0], Filters(SCOPES["acme"]), 10)
        finally:
            event.remove(engine, "before_cursor_execute", capture)
        statement, parameters = next((st, p) for st, p in seen if " ILIKE " in st.upper())
        with db.session() as s:
            rows = s.connection().exec_driver_sql("EXPLAIN (ANALYZE, BUFFERS) " + statement, parameters)
            plan = [row[0] for row in rows]
        scans = [line.strip().lstrip("-> ").split("  (")[0] for line in plan if "Scan" in line]
        total = next((line for line in plan if line.startswith("Execution Time")), "")
        plans[cls] = {
            "term": words[0],
            "scans": scans,
            "uses_trigram_index": any("ix_turns_content_trgm" in line for line in plan),
            "execution_ms": float(re.findall(r"[\d.]+", total)[0]) if total else None,
        }
    return plans


# --- main ------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep-home", action="store_true")
    args = parser.parse_args()

    from models import db

    rng = random.Random(args.seed)
    index = migration()
    with embedded_database("substring", args.keep_home) as url:
        dsn = url.replace("+psycopg", "")
        with psycopg.connect(dsn, autocommit=True) as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
            conn.execute(f"DROP INDEX {index.INDEX}")
            corpus = sentences(args.data)
            codes = planted_codes(rng)
            log(f"loading {args.turns:,} turns built from {len(corpus):,} LongMemEval sentences")
            load_s = load(conn, args.turns, corpus, codes, rng)
            table = conn.execute(
                "SELECT pg_total_relation_size('turns'), avg(length(content)) FROM turns"
            ).fetchone()
        terms = query_terms(corpus, codes, rng)
        log("timing without the trigram index")
        without = time_queries(terms)
        plans_without = explain(terms)
        log("building the trigram index")
        started = time.perf_counter()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(
                f"CREATE INDEX {index.INDEX} ON turns USING gin (content gin_trgm_ops) "
                f"WHERE {index.PREDICATE}"
            )
            build_s = time.perf_counter() - started
            conn.execute("ANALYZE turns")
            index_bytes = conn.execute(f"SELECT pg_relation_size('{index.INDEX}')").fetchone()[0]
        db.reset_engine()  # connections that prepared statements against the old plans go
        log("timing with the trigram index")
        with_index = time_queries(terms)
        plans_with = explain(terms)

    print(
        json.dumps(
            {
                "turns": args.turns,
                "postgres": version,
                "load_s": round(load_s, 1),
                "table_mb": round(table[0] / 2**20),
                "avg_content_chars": round(float(table[1])),
                "index_build_s": round(build_s, 1),
                "index_mb": round(index_bytes / 2**20),
                "terms": terms,
                "without_index": without,
                "with_index": with_index,
                "explain_without": plans_without,
                "explain_with": plans_with,
            }
        )
    )


if __name__ == "__main__":
    main()
