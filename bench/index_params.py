"""The vector leg's two ways of reading a scope, measured apart (issue 37): what an exact scan costs
by the size of the scope, in each SQL form it could take, and what each HNSW variant (storage, m,
ef_construction) costs to build, to keep up on insert and on disk, and what recall it reaches at
each ``hnsw.ef_search``.

    .venv/bin/python bench/index_params.py [--sizes 5000,10000,20000,50000,100000,200000]
        [--exact-queries 30] [--index-turns 0] [--queries 100] [--ef 40,100,200,400]
        [--variants vector/16/64,vector/32/64,halfvec/16/64,halfvec/32/64,halfvec/24/64]
        [--inserts 2048] [--batch 64] [--texts 50000] [--parts A,B] [--out bench-out] [--seed 7]

A small check of the script (a minute or two once the texts are cached):
``--sizes 2000,5000 --texts 3000 --exact-queries 5 --queries 10 --variants vector/16/64,halfvec/16/64
--inserts 128``.

**The vectors** are bench/search_scale.py's stand-ins for real text (its ``embedded_texts`` cache
of LongMemEval sentences embedded by the configured model, ``Rows``: each turn two cached texts
joined, its vector the normalised sum of theirs), so the geometry is that of real text; the queries
are LongMemEval questions embedded by the same model. One fresh embedded PostgreSQL
(``harness.embedded_database``) migrated to head, its HNSW, lexeme, context and trigram indexes
dropped (not measured here; they only slow the load).

**A. exact scans** (``exact.json``, rewritten after every size). The table holds one namespace,
``scale``, grown by COPY to each of ``--sizes`` in turn (VACUUM ANALYZE after each step), so the
scope is the whole index. At each size, per form, ``--exact-queries`` queries at limit 10 and 50
(one untimed pass first), one process (``max_parallel_workers_per_gather = 0``, as Loom sets it):

- ``by_vector``: ``pipelines.search.by_vector`` itself with its thresholds patched so the scope goes
  to the exact branch whatever its size (the count of the scope is in the time);
- ``join_vec``: that branch's statement alone: a MATERIALIZED CTE of (turn id, cosine distance) over
  embeddings joined to turns with the filters, its nearest ``limit`` joined to turns for their rows;
- ``emb_vec``: the distances over the embedding rows alone (a MATERIALIZED CTE), turns joined only
  to the nearest ``limit``;
- ``plain_vec``: ``ORDER BY e.vector <=> q LIMIT k`` over the embedding rows with no index to use
  (a sequential scan and a top-k sort, no materialised CTE): what a query of the ``vector`` column
  costs once the HNSW index is on another expression (a halfvec one), turns joined after;
- ``join_halfexpr`` / ``emb_halfexpr``: the two CTE forms with the distance of
  ``vector::halfvec(384) <=> q::halfvec(384)`` (the cast in every row);
- ``join_half`` / ``emb_half``: the two CTE forms over ``embeddings_half``, a copy of the embedding
  rows (every column) whose ``vector`` is stored as ``halfvec(384)`` (made by CREATE TABLE AS at
  each size), as if the column's type were changed.

Each form's p50/p95 ms and its recall@10/@50 against numpy's exact top k (1.0 for the vector forms;
halfvec rounding may swap near-ties).

**B. index variants** (``index.json``, rewritten after every variant) at ``--index-turns`` turns of
``scale`` (default: the largest size of A) and 1 % as many in ``side``, plus ``2 x --inserts``
pending rows (vector NULL) in namespace ``ins``. Per variant (``storage/m/ef_construction``;
``vector`` = the column as today, ``halfvec`` = the expression index
``((vector::halfvec(384)) halfvec_cosine_ops)``):

1. build: ``CREATE INDEX ... USING hnsw`` with maintenance_work_mem 4 GB (as search_scale.py),
   seconds and ``pg_relation_size``; EXPLAIN of the walk's statement must show the index;
2. sweep: for each ``--ef``, at limit 10 and 50, the index branch's statement of by_vector (turns
   joined to embeddings, the filters, ``ORDER BY`` the distance of the indexed expression, LIMIT;
   ``SET LOCAL hnsw.iterative_scan = relaxed_order``, ``hnsw.ef_search`` = max(ef, 2 x limit) as
   by_vector sets it), ``--queries`` queries after one untimed pass: recall against numpy's exact
   top k (a hit counts when its exact similarity reaches the k-th exact one: search_scale.recall)
   and p50/p95 ms;
3. insert: the embedding stage's own write (``pipelines.embedding.store``: LOCK_SAVED_TURNS and
   STORE_VECTORS in one transaction) storing the vectors of ``--inserts`` pending rows one row a
   transaction, then ``--inserts`` more in batches of ``--batch``: ms per row each way. Then the
   index is dropped and the rows made pending again (vector NULL, VACUUM) for the next variant.
   The same insert is measured first with no HNSW index at all (``none``), the floor.

Progress goes to stderr; the JSON files are rewritten as results come; the last stdout line is the
whole result. Not part of the test suite.
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
from filtered_search import timing  # noqa: E402
from harness import code_version, embedded_database, log  # noqa: E402
from longmemeval import DEFAULT_DATA, load_records  # noqa: E402
from search_scale import (  # noqa: E402
    COPY_EMBEDDINGS,
    COPY_TURNS,
    EMBEDDING_TYPES,
    INDEXES,
    NS,
    SIDE,
    SPAN,
    START,
    THREAD_TURNS,
    Rows,
    embedded_texts,
    embedding_row,
    exact,
    recall,
    turn_row,
)

INS = "ins"  # the pending rows whose vectors the insert measurement stores
LIMITS = (10, 50)
INDEX = "ix_bench_hnsw"
HIT_COLUMNS = "t.id, t.namespace, t.thread_id, t.msg_id, t.role, t.agent, t.ts, t.content, t.saved_at"
EMB_WHERE = (
    "e.vector IS NOT NULL AND e.model = %(model)s AND e.deleted_at IS NULL AND e.namespace IN (%(ns)s)"
)
TURN_WHERE = "t.namespace IN (%(ns)s) AND t.deleted_at IS NULL AND t.sensitivity <> 'high'"


def distance(storage: str, dims: int) -> str:
    """The cosine distance of a row ``e`` to the query %(q)s, as each storage computes it."""
    return {
        "vec": "e.vector <=> %(q)s::vector",
        "halfexpr": f"e.vector::halfvec({dims}) <=> %(q)s::halfvec({dims})",
        "half": f"e.vector <=> %(q)s::halfvec({dims})",
    }[storage]


def join_form(dist: str, table: str) -> str:
    """by_vector's exact branch: every row of the scope measured (turns joined), the nearest read."""
    return f"""
WITH scoped AS MATERIALIZED (
    SELECT t.id AS turn_id, {dist} AS distance
    FROM turns t JOIN {table} e ON e.turn_id = t.id
    WHERE {EMB_WHERE} AND {TURN_WHERE}
)
SELECT {HIT_COLUMNS}, 1 - n.distance AS similarity
FROM turns t JOIN (SELECT turn_id, distance FROM scoped ORDER BY distance LIMIT %(k)s) n
  ON n.turn_id = t.id"""


def emb_form(dist: str, table: str) -> str:
    """The distances over the embedding rows alone; turns joined to the nearest only."""
    return f"""
WITH scoped AS MATERIALIZED (
    SELECT e.turn_id, {dist} AS distance FROM {table} e WHERE {EMB_WHERE}
), nearest AS (SELECT turn_id, distance FROM scoped ORDER BY distance LIMIT %(k)s)
SELECT {HIT_COLUMNS}, 1 - n.distance AS similarity
FROM nearest n JOIN turns t ON t.id = n.turn_id
WHERE {TURN_WHERE}
ORDER BY n.distance"""


def plain_form(dist: str, table: str) -> str:
    """ORDER BY the distance with no index on it: a sequential scan and a top-k sort."""
    return f"""
SELECT {HIT_COLUMNS}, 1 - n.distance AS similarity
FROM (SELECT e.turn_id, {dist} AS distance FROM {table} e WHERE {EMB_WHERE}
      ORDER BY {dist} LIMIT %(k)s) n
JOIN turns t ON t.id = n.turn_id
WHERE {TURN_WHERE}
ORDER BY n.distance"""


def walk_form(dist: str) -> str:
    """by_vector's index branch: the walk, filtered, in the indexed expression's order."""
    return f"""
SELECT {HIT_COLUMNS}, 1 - ({dist}) AS similarity
FROM turns t JOIN embeddings e ON e.turn_id = t.id
WHERE {EMB_WHERE} AND {TURN_WHERE}
ORDER BY {dist} LIMIT %(k)s"""


def exact_forms(dims: int) -> dict[str, str | None]:
    return {
        "by_vector": None,
        "join_vec": join_form(distance("vec", dims), "embeddings"),
        "emb_vec": emb_form(distance("vec", dims), "embeddings"),
        "plain_vec": plain_form(distance("vec", dims), "embeddings"),
        "join_halfexpr": join_form(distance("halfexpr", dims), "embeddings"),
        "emb_halfexpr": emb_form(distance("halfexpr", dims), "embeddings"),
        "join_half": join_form(distance("half", dims), "embeddings_half"),
        "emb_half": emb_form(distance("half", dims), "embeddings_half"),
    }


def text_vector(q: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in q) + "]"


def write(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


# --- the rows ------------------------------------------------------------------------------------


def copy_rows(
    conn: psycopg.Connection,
    rows: Rows,
    start: int,
    stop: int,
    namespace: str,
    first_id: int,
    model: str,
    of: int,
    base: int = 0,
    pending: bool = False,
) -> None:
    """Rows ``start``..``stop`` of ``rows`` as turns (ids from ``first_id``) of ``namespace`` and their
    embedding rows (``pending``: no vector yet): the namespace's ``i - base``-th turn, in threads of
    THREAD_TURNS, its timestamp placed as if the namespace had ``of`` turns over 2025."""

    now = datetime.now(UTC)
    step = SPAN / max(of, 1)
    places = [
        (
            i,
            first_id + i - start,
            f"t{(i - base) // THREAD_TURNS}",
            ("user", "assistant")[i % 2],
            START + step * (i - base),
        )
        for i in range(start, stop)
    ]
    with conn.cursor() as cur:
        with cur.copy(COPY_TURNS) as copy:
            for i, turn_id, thread, role, ts in places:
                copy.write_row(turn_row(turn_id, namespace, thread, i, role, rows.content(i), ts))
        with cur.copy(COPY_EMBEDDINGS) as copy:
            copy.set_types(EMBEDDING_TYPES)
            block = rows.block(start, stop)
            for i, turn_id, thread, role, _ in places:
                vector = None if pending else block[i - start]
                copy.write_row(
                    embedding_row(turn_id, namespace, thread, i, role, rows.content(i), model, vector, now)
                )


def prepare(conn: psycopg.Connection) -> dict:
    from pgvector.psycopg import register_vector

    from models import partitions

    register_vector(conn)
    for name in INDEXES:
        conn.execute(f"DROP INDEX {name}")
    for month in range(13):
        partitions.ensure(conn, datetime(2025 + month // 12, month % 12 + 1, 1, tzinfo=UTC))
    for namespace in (NS, SIDE, INS):
        conn.execute(
            "INSERT INTO namespaces (name, conversation_logging_enabled, created_at, updated_at) "
            "VALUES (%s, true, now(), now())",
            (namespace,),
        )
    settings = {}
    for name in (
        "server_version",
        "shared_buffers",
        "work_mem",
        "max_parallel_maintenance_workers",
        "synchronous_commit",
        "fsync",
        "wal_level",
    ):
        settings[name] = conn.execute(f"SHOW {name}").fetchone()[0]
    settings["pgvector"] = conn.execute(
        "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
    ).fetchone()[0]
    settings["vector_storage"] = conn.execute(
        "SELECT typstorage FROM pg_type WHERE typname = 'vector'"
    ).fetchone()[0]
    return settings


def table_mb(conn: psycopg.Connection, table: str) -> float:
    return round(
        conn.execute("SELECT pg_total_relation_size(%s::regclass)", (table,)).fetchone()[0] / 2**20, 1
    )


# --- A: exact scans ------------------------------------------------------------------------------


def run_form(
    conn, url_model: str, form: str, sql: str | None, queries: np.ndarray, limit: int
) -> tuple[list, list]:
    """(ms per query, row indexes found per query) of one form at one limit, after an untimed pass."""
    from models import db
    from pipelines import search

    times, found = [], []
    for timed in (False, True):
        for q in queries:
            started = time.perf_counter()
            if sql is None:
                with db.session() as s:
                    hits = search.by_vector(s, q.tolist(), url_model, search.Filters([NS]), limit, -1.0)
                ids = [int(h.msg_id[1:]) for h in hits]
            else:
                with conn.transaction():
                    conn.execute("SET LOCAL max_parallel_workers_per_gather = 0")
                    got = conn.execute(
                        sql, {"q": text_vector(q), "model": url_model, "ns": NS, "k": limit}
                    ).fetchall()
                ids = [int(r[3][1:]) for r in got]
            if timed:
                times.append((time.perf_counter() - started) * 1000)
                found.append(ids)
    return times, found


def recalls(rows: Rows, queries: np.ndarray, found: list, truth_sims: np.ndarray, k: int) -> float:
    return round(
        statistics.mean(
            recall(rows, q, f, float(truth_sims[n, k - 1]), k)
            for n, (q, f) in enumerate(zip(queries, found, strict=True))
        ),
        4,
    )


def prefix_truth(rows: Rows, queries: np.ndarray, size: int, k: int) -> np.ndarray:
    """The k-th best exact similarity per query among the first ``size`` rows of ``scale``."""
    sims = queries @ rows.block(0, size).T
    return -np.sort(-sims, axis=1)[:, :k]


def part_a(
    conn, rows: Rows, queries: np.ndarray, sizes: list[int], model: str, out: dict, path: Path
) -> None:
    from pipelines import search

    dims = rows.vectors.shape[1]
    forms = exact_forms(dims)
    # Every scope, whatever its size or share, to the exact branch.
    search.EXACT_SCAN_ROWS, search.SELECTIVE_SHARE = 10**12, 10.0
    out["exact"] = {"forms": {k: v for k, v in forms.items() if v}, "sizes": []}
    loaded = 0
    for size in sizes:
        log(f"A: loading {NS} to {size:,} rows")
        started = time.perf_counter()
        copy_rows(conn, rows, loaded, size, NS, loaded + 1, model, rows.sizes[NS])
        loaded = size
        conn.execute("VACUUM ANALYZE turns")
        conn.execute("VACUUM ANALYZE embeddings")
        conn.execute("DROP TABLE IF EXISTS embeddings_half")
        conn.execute(
            f"CREATE TABLE embeddings_half AS SELECT id, turn_id, namespace, thread_id, agent, msg_id, role, "
            f"run_id, user_id, text, digest, model, vector::halfvec({dims}) AS vector, error, created_at, "
            f"embedded_at, deleted_at, is_saved, saved_at FROM embeddings"
        )
        conn.execute("VACUUM ANALYZE embeddings_half")
        step = {
            "rows": size,
            "load_s": round(time.perf_counter() - started, 1),
            "embeddings_mb": table_mb(conn, "embeddings"),
            "embeddings_half_mb": table_mb(conn, "embeddings_half"),
            "forms": {},
        }
        truth = prefix_truth(rows, queries, size, max(LIMITS))
        for form, sql in forms.items():
            for limit in LIMITS:
                times, found = run_form(conn, model, form, sql, queries, limit)
                result = {**timing(times), "recall": recalls(rows, queries, found, truth, limit)}
                step["forms"][f"{form}@{limit}"] = result
                timed = f"p50 {result['p50_ms']} p95 {result['p95_ms']} ms"
                log(f"  {size:,} {form} limit {limit}: {timed}, recall {result['recall']}")
        out["exact"]["sizes"].append(step)
        write(path, out)
    out["exact"]["plans"] = {}
    for form in ("join_vec", "emb_vec", "plain_vec"):
        with psycopg.ClientCursor(conn) as cur:
            cur.execute(
                "EXPLAIN " + forms[form], {"q": text_vector(queries[0]), "model": model, "ns": NS, "k": 10}
            )
            out["exact"]["plans"][form] = [r[0] for r in cur.fetchall()]
    write(path, out)


# --- B: index variants ---------------------------------------------------------------------------


def index_ddl(storage: str, m: int, efc: int, dims: int) -> str:
    target = (
        "vector vector_cosine_ops" if storage == "vector" else f"(vector::halfvec({dims})) halfvec_cosine_ops"
    )
    return f"CREATE INDEX {INDEX} ON embeddings USING hnsw ({target}) WITH (m = {m}, ef_construction = {efc})"


def sweep(
    conn, rows: Rows, queries: np.ndarray, truth, model: str, storage: str, efs: list[int]
) -> list[dict]:
    dims = rows.vectors.shape[1]
    sql = walk_form(distance("vec" if storage == "vector" else "halfexpr", dims))
    _, truth_sims = truth
    results = []
    for ef in efs:
        for limit in LIMITS:
            walk_ef = max(ef, 2 * limit)
            times, found = [], []
            for timed in (False, True):
                for q in queries:
                    started = time.perf_counter()
                    with conn.transaction():
                        conn.execute("SET LOCAL max_parallel_workers_per_gather = 0")
                        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                        conn.execute(f"SET LOCAL hnsw.ef_search = {walk_ef}")
                        got = conn.execute(
                            sql, {"q": text_vector(q), "model": model, "ns": NS, "k": limit}
                        ).fetchall()
                    if timed:
                        times.append((time.perf_counter() - started) * 1000)
                        found.append([int(r[3][1:]) for r in got])
            result = {
                "ef_search": ef,
                "limit": limit,
                "walk_ef": walk_ef,
                "recall": recalls(rows, queries, found, truth_sims, limit),
                "short": sum(len(f) < limit for f in found),
                **timing(times),
            }
            results.append(result)
            timed = f"p50 {result['p50_ms']} p95 {result['p95_ms']} ms"
            log(f"    ef {ef} limit {limit}: recall {result['recall']}, {timed}")
    return results


def plan_uses_index(conn, rows: Rows, q: np.ndarray, model: str, storage: str) -> list[str]:
    dims = rows.vectors.shape[1]
    sql = walk_form(distance("vec" if storage == "vector" else "halfexpr", dims))
    with conn.transaction(), psycopg.ClientCursor(conn) as cur:
        cur.execute("SET LOCAL max_parallel_workers_per_gather = 0")
        cur.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cur.execute("EXPLAIN " + sql, {"q": text_vector(q), "model": model, "ns": NS, "k": 10})
        plan = [r[0] for r in cur.fetchall()]
    return plan


def inserts(conn, staged: list[tuple[int, str]], vectors: np.ndarray, n: int, batch: int, model: str) -> dict:
    """ms per row of the embedding stage's store: ``n`` rows one a transaction, ``n`` in batches."""
    from models import db
    from pipelines import embedding

    def store(part: list[int]) -> None:
        pending = [embedding.Pending(staged[j][0], "", staged[j][1]) for j in part]
        with db.session() as s:
            written = embedding.store(s, pending, [vectors[j].tolist() for j in part], model)
        if len(written) != len(part):
            raise RuntimeError(f"store answered {written}")

    started = time.perf_counter()
    for j in range(n):
        store([j])
    single = (time.perf_counter() - started) * 1000 / n
    started = time.perf_counter()
    for j in range(n, 2 * n, batch):
        store(list(range(j, min(j + batch, 2 * n))))
    batched = (time.perf_counter() - started) * 1000 / n
    stored = conn.execute(
        "SELECT count(*) FROM embeddings WHERE namespace = %s AND vector IS NOT NULL", (INS,)
    ).fetchone()[0]
    return {
        "single_ms_per_row": round(single, 3),
        f"batch{batch}_ms_per_row": round(batched, 3),
        "stored": stored,
    }


def reset_staged(conn) -> None:
    conn.execute(
        "UPDATE embeddings SET vector = NULL, model = NULL, embedded_at = NULL WHERE namespace = %s", (INS,)
    )
    conn.execute("VACUUM ANALYZE embeddings")


def part_b(
    conn, rows: Rows, staging: Rows, queries: np.ndarray, args, model: str, out: dict, path: Path
) -> None:
    dims = rows.vectors.shape[1]
    turns, side = rows.sizes[NS], rows.sizes[SIDE]
    have = conn.execute("SELECT count(*) FROM embeddings WHERE namespace = %s", (NS,)).fetchone()[0]
    log(f"B: loading {NS} to {turns:,}, {side:,} in {SIDE}, {len(staging):,} pending in {INS}")
    if have < turns:
        copy_rows(conn, rows, have, turns, NS, have + 1, model, turns)
    copy_rows(conn, rows, turns, turns + side, SIDE, turns + 1, model, side, base=turns)
    copy_rows(conn, staging, 0, len(staging), INS, turns + side + 1, model, len(staging), pending=True)
    conn.execute("DROP TABLE IF EXISTS embeddings_half")
    conn.execute("VACUUM ANALYZE turns")
    conn.execute("VACUUM ANALYZE embeddings")
    staged = conn.execute(
        "SELECT id, digest FROM embeddings WHERE namespace = %s ORDER BY turn_id", (INS,)
    ).fetchall()
    staged_vectors = staging.block(0, len(staging))
    log("B: the exact top 50 of every query (numpy)")
    truth = exact(rows, queries, max(LIMITS))
    out["index"] = {
        "turns": turns,
        "side": side,
        "queries": len(queries),
        "embeddings_mb": table_mb(conn, "embeddings"),
        "variants": [],
    }
    log("B: inserts with no HNSW index")
    out["index"]["no_index_insert"] = inserts(conn, staged, staged_vectors, args.inserts, args.batch, model)
    log(f"  {out['index']['no_index_insert']}")
    reset_staged(conn)
    write(path, out)
    for spec in args.variants.split(","):
        storage, m, efc = spec.split("/")
        m, efc = int(m), int(efc)
        ddl = index_ddl(storage, m, efc, dims)
        log(f"B: {ddl}")
        variant: dict = {"storage": storage, "m": m, "ef_construction": efc, "ddl": ddl}
        conn.execute("SET maintenance_work_mem = '4GB'")
        started = time.perf_counter()
        conn.execute(ddl)
        variant["build_s"] = round(time.perf_counter() - started, 1)
        variant["index_mb"] = round(
            conn.execute("SELECT pg_relation_size(%s::regclass)", (INDEX,)).fetchone()[0] / 2**20, 1
        )
        conn.execute("RESET maintenance_work_mem")
        log(f"  built in {variant['build_s']} s, {variant['index_mb']} MB")
        plan = plan_uses_index(conn, rows, queries[0], model, storage)
        variant["plan"] = plan
        variant["uses_index"] = any(INDEX in line for line in plan)
        if not variant["uses_index"]:
            log("  the walk's plan does not use the index:\n" + "\n".join(plan))
        out["index"]["variants"].append(variant)
        write(path, out)
        variant["sweep"] = sweep(conn, rows, queries, truth, model, storage, args.efs)
        write(path, out)
        log("  inserts")
        variant["insert"] = inserts(conn, staged, staged_vectors, args.inserts, args.batch, model)
        variant["index_mb_after_insert"] = round(
            conn.execute("SELECT pg_relation_size(%s::regclass)", (INDEX,)).fetchone()[0] / 2**20, 1
        )
        log(f"  {variant['insert']}")
        write(path, out)
        conn.execute(f"DROP INDEX {INDEX}")
        reset_staged(conn)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="5000,10000,20000,50000,100000,200000")
    parser.add_argument("--exact-queries", type=int, default=30)
    parser.add_argument("--index-turns", type=int, default=0, help="turns of B (0: the largest size)")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--ef", default="40,100,200,400")
    parser.add_argument(
        "--variants", default="vector/16/64,vector/32/64,halfvec/16/64,halfvec/32/64,halfvec/24/64"
    )
    parser.add_argument("--inserts", type=int, default=2048, help="rows stored each way (single, batched)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--texts", type=int, default=50_000)
    parser.add_argument("--parts", default="A,B")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    args.efs = sorted({int(e) for e in args.ef.split(",")})
    parts = set(args.parts.upper().split(","))
    turns = max(args.index_turns or sizes[-1], sizes[-1] if "A" in parts else 0)
    args.out.mkdir(parents=True, exist_ok=True)

    from providers.embedders import get_embedder

    embedder = get_embedder()
    texts, vectors, cache = embedded_texts(embedder, args.data, args.texts, args.seed)
    rng = np.random.default_rng(args.seed)
    rows = Rows(texts, vectors, turns, max(1, turns // 100), rng)
    staging = Rows(texts, vectors, 2 * args.inserts, 0, rng)
    questions = list(dict.fromkeys(r["question"] for r in load_records(args.data)))
    import random

    random.Random(args.seed).shuffle(questions)
    questions = questions[: max(args.queries, args.exact_queries)]
    queries = np.asarray(embedder.embed(questions), dtype=np.float32)
    model = embedder.name
    base = {
        "model": model,
        "precision": getattr(embedder, "precision", None),
        "texts": len(texts),
        "cache": cache,
        "seed": args.seed,
        "code": code_version(),
    }
    a_path, b_path = args.out / "exact.json", args.out / "index.json"
    started = time.perf_counter()
    with embedded_database("index-params") as url:
        with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
            base["postgres"] = prepare(conn)
            log(f"settings: {base['postgres']}")
            a_out = {**base, "queries": args.exact_queries}
            b_out = {**base}
            if "A" in parts:
                part_a(conn, rows, queries[: args.exact_queries], sizes, model, a_out, a_path)
            if "B" in parts:
                part_b(conn, rows, staging, queries[: args.queries], args, model, b_out, b_path)
    result = {
        "A": a_out if "A" in parts else None,
        "B": b_out if "B" in parts else None,
        "total_s": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
