"""conversation.search at 1,000,000 turns with vectors of real text: the default (hybrid) mode's
p50/p95 through the op itself, and the semantic leg's recall against an exact scan for several
``LOOM_CONVERSATION_SEARCH_EF_SEARCH`` values (the walk's ``hnsw.ef_search``).

    .venv/bin/python bench/search_scale.py [--turns 1000000] [--side 10000] [--texts 50000]
        [--queries 100] [--ef 40,64,100,200,400,800] [--target 0.95] [--index m=16,ef_construction=64]
        [--no-contexts] [--seed 7] [--data FILE] [--keep-home]

A small check of the script (a few minutes; its texts are cached after the first run):
``--texts 3000 --turns 45000 --side 1000 --queries 20``. ``--turns`` must exceed
``pipelines.search.EXACT_SCAN_ROWS`` (40,000) for the vector leg to read the HNSW index at all.

**The texts and their vectors.** Embedding a million texts here takes hours, so the turns are built
from fewer texts embedded once. The distinct LongMemEval sentences of 20 to 400 characters
(``substring.sentences``: 112,473 in the oracle file) are shuffled with the seed and the first
``--texts`` (50,000 by default) are embedded with the configured embedder, as Loom embeds by default
(the local all-MiniLM-L6-v2, ``LOOM_EMBED_PRECISION`` int8), 256 texts a call. The texts and their
vectors are cached in ``~/.cache/loom-bench/search-scale-<model>-<precision>-<source>-s<seed>``
(``.json``: the texts; ``.npy``: float32 vectors; outside the repository), ``source`` a digest of
the data file: a second run loads them at once (the model is still loaded, for the queries), a run
asking for more texts embeds only those past the cached ones (a prefix of the same order), and an
interrupted run keeps what it embedded (saved every 5,000). The int8 model embeds each text alone,
so a cached vector is the one the embedding stage would store for that text.

**The rows.** ``--turns`` turns in namespace ``scale`` and ``--side`` in ``side`` (a second
namespace, so that a search is scoped as in a real deployment: its rows are in the same HNSW graph
and the same GIN indexes, and the walk must pass over them). Each turn's content is two cached
texts joined by a space (a random ordered pair of two different texts, seeded) and its vector the
normalised sum of their two vectors. That is a fair stand-in for embedding the joined text: MiniLM
mean-pools its tokens' states, so the embedding of two sentences lies near the normalised sum of
theirs; how near is measured on ``STAND_IN_SAMPLES`` pairs each run (``stand_in``: the cosine
between the real embedding of the joined text and the normalised sum, beside the nearer part's
cosine alone and a random text's; at 3,000 texts: 0.895 on average, 0.812 at the 5th percentile,
against 0.804 for the nearer part and 0.083 for a random text). The vectors therefore have the
geometry of real text (its neighbourhoods, its few effective dimensions), unlike the isotropic
synthetic ones of bench/filtered_search.py (recall@10 0.608 at 1,000,000 with ef_search 40). The
same text recurs in about 2 x turns / texts turns (40 at 1,000,000 of 50,000), each time beside a
different partner: about as often as a sentence recurs in bench/lexical_scale.py's turns (26), so
the lexical leg meets words about as common as there. Threads of 100 turns, roles alternating
user/assistant, timestamps spread evenly over 2025 in the monthly partitions
(``partitions.ensure``). Contexts (``turns.context_lexemes``) are filled as Loom fills them, by
``pipelines.contexts.rebuild`` over every thread, ``contexts.BATCH_THREADS`` threads a transaction
as the contexts stage does (``--no-contexts``: left NULL, as turns written before migration 0032);
about half the turns get one (a pair of sentences is often within ``contexts.SHORT_CHARS``).

**The load.** On a fresh embedded PostgreSQL in a temporary LOOM_HOME migrated to head (nothing else
runs), the HNSW, lexeme, context and trigram indexes are dropped (their definitions kept from
``pg_indexes``), the turns and their embedding rows are loaded with COPY, the contexts filled
(after an ANALYZE), and the indexes built again with the migrations' definitions
(maintenance_work_mem 4 GB; ``--index`` adds HNSW build parameters), then VACUUM ANALYZE.

**The measurements.** ``--queries`` distinct LongMemEval questions (seeded), embedded by the same
model. Truth: an exact scan in numpy of every ``scale`` vector against the same query vectors.

1. ``sweep``: for each ``--ef`` value (set as ``LOOM_CONVERSATION_SEARCH_EF_SEARCH``, read by
   ``pipelines.search.by_vector``: the walk keeps that many whatever the page), ``by_vector`` over
   ``scale`` with no floor, at limit 10 (the semantic mode's default page) and limit 50 (the pool
   the hybrid mode's vector leg fetches for a page of 10), after one untimed pass: recall against
   the exact top 10 / 50 (a hit counts when its exact similarity reaches the k-th exact one, so
   that duplicate vectors do not count as misses) and p50/p95 ms of the function alone.
2. ``modes``: ``conversation.search`` through ``ops.registry.call`` as an operator (the query's
   embedding, both legs, the fusion, the floor and the excerpts are in the time) in each mode
   (hybrid, the default; semantic; lexical), limit 10, one untimed pass, then timed: p50/p95 ms,
   the op's own per-leg times and the candidates per leg. Measured at the default setting, and
   again at ``chosen_ef``, the smallest ``--ef`` whose recall reaches ``--target`` at both limits
   (the largest when none does, with ``target_reached`` false), when it differs (hybrid and
   semantic only: the lexical mode has no walk).

Progress goes to stderr; the last stdout line is one JSON object. Not part of the test suite.
Figures: bench/README.md (issue 37 items 1 and 2).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
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

import numpy as np  # noqa: E402
import psycopg  # noqa: E402
from context_replica import CACHE  # noqa: E402
from filtered_search import timing, unit  # noqa: E402
from harness import code_version, embedded_database, index_definitions, log  # noqa: E402
from longmemeval import DEFAULT_DATA, load_records  # noqa: E402
from substring import sentences  # noqa: E402

from models.queries.search import VECTOR_INDEX  # noqa: E402
from pipelines import keys  # noqa: E402

NS, SIDE = "scale", "side"
THREAD_TURNS = 100
START, SPAN = datetime(2025, 1, 1, tzinfo=UTC), timedelta(days=365)
EMBED_CALL, CHECKPOINT = 256, 5_000
STAND_IN_SAMPLES = 200
LIMITS = (10, 50)  # the semantic mode's page, the hybrid mode's vector pool for a page of 10
EF_SETTING = "LOOM_CONVERSATION_SEARCH_EF_SEARCH"
# Dropped before the load and built again after it, from their own definitions.
INDEXES = (
    VECTOR_INDEX,
    "ix_turns_namespace_lexemes",
    "ix_turns_namespace_context",
    "ix_turns_content_trgm",
)
HNSW_PARAMS = ("m", "ef_construction")
# The rows' load: turns as text, their embedding rows (vectors) in binary.
COPY_TURNS = (
    "COPY turns (id, namespace, thread_id, agent, msg_id, role, content, metadata, sensitivity, ts) "
    "FROM STDIN"
)
COPY_EMBEDDINGS = (
    "COPY embeddings (turn_id, namespace, thread_id, agent, msg_id, role, text, digest, model, vector, "
    "created_at, embedded_at) FROM STDIN WITH (FORMAT BINARY)"
)
EMBEDDING_TYPES = [
    "bigint",
    *["varchar"] * 5,
    "text",
    "varchar",
    "varchar",
    "vector",
    "timestamptz",
    "timestamptz",
]
BLOCK = 50_000  # rows built (and scanned) at a time


def turn_row(turn_id: int, namespace: str, thread: str, i: int, role: str, text: str, ts: datetime) -> tuple:
    """The i-th text's turn, as COPY_TURNS takes it."""
    return (turn_id, namespace, thread, "default", f"m{i}", role, text, "{}", "none", ts)


def embedding_row(
    turn_id: int, namespace: str, thread: str, i: int, role: str, text: str, model: str, vector, now: datetime
) -> tuple:
    """Its embedding row, as COPY_EMBEDDINGS takes it (``vector`` None: pending, no model yet)."""
    embedded = vector is not None
    digest = keys.digest(text)
    return (turn_id, namespace, thread, "default", f"m{i}", role, text, digest, model if embedded else None,
            vector, now, now if embedded else None)  # fmt: skip


# --- the texts and their vectors -------------------------------------------------------------------


def ordered_texts(data: Path, seed: int) -> list[str]:
    """The distinct LongMemEval sentences of 20-400 characters, in the seed's order."""
    distinct = list(dict.fromkeys(sentences(data)))
    random.Random(seed).shuffle(distinct)
    return distinct


def cache_stem(embedder, data: Path, seed: int) -> Path:
    """Where the vectors of this model, precision and source live."""
    from models.settings import get_settings

    settings = get_settings()
    if settings.embed_provider == "local":
        precision = getattr(embedder, "precision", settings.embed_precision)
    else:
        precision = f"api{embedder.dimensions}"
    source = hashlib.sha256(data.read_bytes()).hexdigest()[:12]
    model = re.sub(r"[^A-Za-z0-9._-]", "_", embedder.name)
    return CACHE / f"search-scale-{model}-{precision}-{source}-s{seed}"


def embedded_texts(embedder, data: Path, count: int, seed: int) -> tuple[list[str], np.ndarray, dict]:
    """The first ``count`` texts of the seeded order and their vectors, from the cache as far as it
    goes, the rest embedded now (and added to the cache)."""
    texts = ordered_texts(data, seed)
    if count > len(texts):
        raise SystemExit(f"--texts {count:,}: the data holds {len(texts):,} distinct sentences")
    stem = cache_stem(embedder, data, seed)
    texts_path, vectors_path = stem.with_suffix(".json"), stem.with_suffix(".npy")
    vectors = np.zeros((0, embedder.dimensions), dtype=np.float32)
    if texts_path.exists() and vectors_path.exists():
        cached = json.loads(texts_path.read_text(encoding="utf-8"))
        vectors = np.load(vectors_path)
        if cached != texts[: len(cached)] or len(vectors) != len(cached):
            log(f"cache {stem} does not match the data; embedding again")
            vectors = vectors[:0]
    had = len(vectors)
    info = {"path": str(stem), "cached": min(had, count), "embedded": max(0, count - had), "embed_s": 0.0}
    if had >= count:
        log(f"{count:,} texts and their vectors from {stem}")
        return texts[:count], vectors[:count], info
    log(f"embedding {count - had:,} texts ({had:,} cached) with {embedder.name}")
    started = time.perf_counter()
    parts = [vectors]
    done = had
    while done < count:
        upto = min(done + CHECKPOINT, count)
        for start in range(done, upto, EMBED_CALL):
            batch = texts[start : min(start + EMBED_CALL, upto)]
            parts.append(np.asarray(embedder.embed(batch), dtype=np.float32))
        done = upto
        vectors = np.concatenate(parts)
        parts = [vectors]
        CACHE.mkdir(parents=True, exist_ok=True)
        np.save(vectors_path, vectors)
        texts_path.write_text(json.dumps(texts[:done]), encoding="utf-8")
        rate = (done - had) / (time.perf_counter() - started)
        log(f"  {done:,}/{count:,} texts embedded ({rate:.0f}/s), cached in {stem}")
    info["embed_s"] = round(time.perf_counter() - started, 1)
    return texts[:count], vectors, info


def stand_in(embedder, texts: list[str], vectors: np.ndarray, rng: np.random.Generator) -> dict:
    """How near the normalised sum of two texts' vectors is to the embedding of the texts joined."""
    a, b = pairs(rng, len(texts), STAND_IN_SAMPLES)
    real = np.asarray(embedder.embed([f"{texts[i]} {texts[j]}" for i, j in zip(a, b, strict=True)]))
    summed = unit(vectors[a] + vectors[b])
    cos = np.sum(real * summed, axis=1)
    best_part = np.maximum(np.sum(real * vectors[a], axis=1), np.sum(real * vectors[b], axis=1))
    others = vectors[rng.integers(0, len(texts), STAND_IN_SAMPLES)]
    return {
        "samples": STAND_IN_SAMPLES,
        "cos_sum_mean": round(float(cos.mean()), 4),
        "cos_sum_p5": round(float(np.percentile(cos, 5)), 4),
        "cos_sum_min": round(float(cos.min()), 4),
        "cos_nearer_part_mean": round(float(best_part.mean()), 4),
        "cos_random_text_mean": round(float(np.sum(real * others, axis=1).mean()), 4),
    }


# --- the rows --------------------------------------------------------------------------------------


def pairs(rng: np.random.Generator, texts: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` ordered pairs of two different texts."""
    a = rng.integers(0, texts, n, dtype=np.int32)
    b = rng.integers(0, texts - 1, n, dtype=np.int32)
    return a, b + (b >= a)


class Rows:
    """The turns of both namespaces: row ``i`` (msg id ``m<i>``, turn id ``i + 1``) joins texts
    ``a[i]`` and ``b[i]``; the first ``turns`` rows are ``scale``'s, the rest ``side``'s."""

    def __init__(self, texts: list[str], vectors: np.ndarray, turns: int, side: int, rng) -> None:
        self.texts, self.vectors = texts, vectors
        self.a, self.b = pairs(rng, len(texts), turns + side)
        self.sizes = {NS: turns, SIDE: side}
        self.offsets = {NS: 0, SIDE: turns}

    def __len__(self) -> int:
        return len(self.a)

    def content(self, i: int) -> str:
        return f"{self.texts[self.a[i]]} {self.texts[self.b[i]]}"

    def block(self, start: int, stop: int) -> np.ndarray:
        return unit(self.vectors[self.a[start:stop]] + self.vectors[self.b[start:stop]]).astype(np.float32)

    def places(self):
        """(row, namespace, thread, role, ts) of every row, in order."""
        for namespace, n in self.sizes.items():
            step = SPAN / max(n, 1)
            for j in range(n):
                role = ("user", "assistant")[j % 2]
                yield self.offsets[namespace] + j, namespace, f"t{j // THREAD_TURNS}", role, START + step * j


def hnsw_options(spec: str | None) -> str:
    """``m=16,ef_construction=64`` as the index's WITH clause."""
    if not spec:
        return ""
    options = {}
    for part in spec.split(","):
        key, _, value = part.partition("=")
        if key.strip() not in HNSW_PARAMS or not value.strip().isdigit():
            raise SystemExit(f"--index {spec!r}: give {', '.join(HNSW_PARAMS)} as name=integer")
        options[key.strip()] = int(value)
    return " WITH (" + ", ".join(f"{k} = {v}" for k, v in options.items()) + ")"


def load(conn: psycopg.Connection, rows: Rows, model: str) -> None:
    from pgvector.psycopg import register_vector

    from models import partitions

    register_vector(conn)
    for month in range(13):
        partitions.ensure(conn, datetime(2025 + month // 12, month % 12 + 1, 1, tzinfo=UTC))
    now = datetime.now(UTC)
    with conn.cursor() as cur:
        with cur.copy(COPY_TURNS) as copy:
            for i, namespace, thread, role, ts in rows.places():
                copy.write_row(turn_row(i + 1, namespace, thread, i, role, rows.content(i), ts))
                if (i + 1) % 200_000 == 0:
                    log(f"  {i + 1:,} turns copied")
        with cur.copy(COPY_EMBEDDINGS) as copy:
            copy.set_types(EMBEDDING_TYPES)
            block, block_start = None, -1
            for i, namespace, thread, role, _ in rows.places():
                if i >= block_start + BLOCK or block is None:
                    block_start = i
                    block = rows.block(i, min(i + BLOCK, len(rows)))
                vector = block[i - block_start]
                copy.write_row(
                    embedding_row(i + 1, namespace, thread, i, role, rows.content(i), model, vector, now)
                )
                if (i + 1) % 200_000 == 0:
                    log(f"  {i + 1:,} embedding rows copied")
    conn.execute("SELECT setval(pg_get_serial_sequence('turns', 'id'), %s)", (len(rows),))
    for namespace in rows.sizes:
        conn.execute(
            "INSERT INTO namespaces (name, conversation_logging_enabled, created_at, updated_at) "
            "VALUES (%s, true, now(), now())",
            (namespace,),
        )


def fill_contexts(rows: Rows) -> dict:
    """Every thread's contexts, as the contexts stage rebuilds them."""
    from models import db
    from pipelines import contexts

    threads = sorted(
        (namespace, f"t{t}") for namespace, n in rows.sizes.items() for t in range(-(-n // THREAD_TURNS))
    )
    started, changed = time.perf_counter(), 0
    for k, batch in enumerate(contexts.batches(threads), 1):
        with db.session() as s:
            changed += contexts.rebuild(s, batch)
        if k % 20 == 0:
            log(f"  contexts of {k * contexts.BATCH_THREADS:,}/{len(threads):,} threads")
    return {"turns_with_context": changed, "seconds": round(time.perf_counter() - started, 1)}


def build(url: str, rows: Rows, model: str, index_with: str, contexts_on: bool, out: dict) -> None:
    from models import db

    with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
        out["postgres"] = conn.execute("SHOW server_version").fetchone()[0]
        definitions = index_definitions(conn, INDEXES)
        for name in INDEXES:
            conn.execute(f"DROP INDEX {name}")
        log(f"loading {len(rows):,} turns and their vectors")
        started = time.perf_counter()
        load(conn, rows, model)
        conn.execute("ANALYZE turns")
        conn.execute("ANALYZE embeddings")
        out["load_s"] = round(time.perf_counter() - started, 1)
    db.reset_engine()
    if contexts_on:
        log("filling the turns' contexts (pipelines.contexts.rebuild)")
        out["contexts"] = fill_contexts(rows)
    else:
        out["contexts"] = None
    db.reset_engine()
    with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '4GB'")
        out["indexes"] = {}
        for name in INDEXES:
            definition = definitions[name]
            if name == VECTOR_INDEX and index_with:  # the parameters asked for instead of the migration's
                definition = re.sub(r" WITH \(.*\)$", "", definition) + index_with
            log(f"building {name}")
            started = time.perf_counter()
            conn.execute(definition)
            size = conn.execute(
                "SELECT coalesce(sum(pg_relation_size(i.indexrelid)), 0) FROM pg_index i "
                "WHERE i.indexrelid = %s::regclass "
                "OR i.indexrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = %s::regclass)",
                (name, name),
            ).fetchone()[0]
            out["indexes"][name] = {
                "definition": definition,
                "build_s": round(time.perf_counter() - started, 1),
                "mb": round(size / 2**20),
            }
        log("VACUUM ANALYZE")
        conn.execute("VACUUM ANALYZE turns")
        conn.execute("VACUUM ANALYZE embeddings")
        sizes = conn.execute(
            "SELECT (SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits "
            "WHERE inhparent = 'turns'::regclass), pg_total_relation_size('embeddings')"
        ).fetchone()
        out["table_mb"] = {"turns": round(sizes[0] / 2**20), "embeddings": round(sizes[1] / 2**20)}
    db.reset_engine()


# --- the truth -------------------------------------------------------------------------------------


def exact(rows: Rows, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per query, the ``k`` rows of ``scale`` nearest by cosine (rows, similarities), best first."""
    n = rows.sizes[NS]
    best_rows = np.zeros((len(queries), 0), dtype=np.int64)
    best_sims = np.zeros((len(queries), 0), dtype=np.float32)
    for start in range(0, n, BLOCK):
        sims = queries @ rows.block(start, min(start + BLOCK, n)).T
        ids = np.broadcast_to(np.arange(start, start + sims.shape[1]), sims.shape)
        best_sims = np.concatenate([best_sims, sims], axis=1)
        best_rows = np.concatenate([best_rows, ids], axis=1)
        if best_sims.shape[1] > k:
            keep = np.argpartition(-best_sims, k - 1, axis=1)[:, :k]
            best_sims = np.take_along_axis(best_sims, keep, axis=1)
            best_rows = np.take_along_axis(best_rows, keep, axis=1)
    order = np.argsort(-best_sims, axis=1)
    return np.take_along_axis(best_rows, order, axis=1), np.take_along_axis(best_sims, order, axis=1)


def recall(rows: Rows, query: np.ndarray, found: list[int], kth: float, k: int) -> float:
    """The share of the exact top ``k`` found: a hit counts when its exact similarity reaches the
    k-th exact one (a duplicate of a row in the top k is as near as it)."""
    if not found:
        return 0.0
    ids = np.array(found)
    sims = unit(rows.vectors[rows.a[ids]] + rows.vectors[rows.b[ids]]) @ query
    return min(int(np.sum(sims >= kth - 1e-5)), k) / k


# --- the measurements ------------------------------------------------------------------------------


def ef_setting(value: int | None) -> None:
    from models.settings import get_settings

    if value is None:
        os.environ.pop(EF_SETTING, None)
    else:
        os.environ[EF_SETTING] = str(value)
    get_settings.cache_clear()


def sweep(rows: Rows, queries: np.ndarray, truth, model: str, efs: list[int]) -> list[dict]:
    from models import db
    from pipelines import search

    truth_rows, truth_sims = truth
    scope = search.Filters([NS])
    results = []
    for ef in efs:
        ef_setting(ef)
        for limit in LIMITS:
            times, found = [], []
            for timed in (False, True):
                for q in queries:
                    started = time.perf_counter()
                    with db.session() as s:
                        hits = search.by_vector(s, q.tolist(), model, scope, limit, -1.0)
                    if timed:
                        times.append((time.perf_counter() - started) * 1000)
                        found.append([int(h.msg_id[1:]) for h in hits])
            recalls = [
                recall(rows, q, f, float(truth_sims[n, limit - 1]), limit)
                for n, (q, f) in enumerate(zip(queries, found, strict=True))
            ]
            exact_ids = [set(truth_rows[n, :limit].tolist()) for n in range(len(queries))]
            result = {
                "ef_search": ef,
                "limit": limit,
                "walk_ef": max(ef, 2 * limit),
                "recall": round(statistics.mean(recalls), 4),
                "recall_min": round(min(recalls), 2),
                "same_ids": round(
                    statistics.mean(len(set(f) & e) / limit for f, e in zip(found, exact_ids, strict=True)), 4
                ),
                **timing(times),
            }
            results.append(result)
            log(f"  ef {ef}, limit {limit}: recall {result['recall']}, p50 {result['p50_ms']} ms")
    ef_setting(None)
    return results


def chosen_ef(results: list[dict], target: float) -> tuple[int, bool]:
    """The smallest ef whose recall reaches ``target`` at every limit, or the largest."""
    efs = sorted({r["ef_search"] for r in results})
    for ef in efs:
        if all(r["recall"] >= target for r in results if r["ef_search"] == ef):
            return ef, True
    return efs[-1], False


def default_ef() -> int:
    from models.settings import Settings

    return Settings.model_fields["conversation_search_ef_search"].default


def modes(questions: list[str], names: tuple[str, ...] = ("hybrid", "semantic", "lexical")) -> dict:
    from ops.caller import OPERATOR
    from ops.registry import call

    results = {}
    for mode in names:
        times, legs, candidates, answered = [], {}, {}, set()
        for timed in (False, True):
            for question in questions:
                body = {"namespace": NS, "query": question, "search_mode": mode, "limit": 10}
                started = time.perf_counter()
                answer = call("conversation.search", OPERATOR, body)
                if not timed:
                    continue
                times.append((time.perf_counter() - started) * 1000)
                answered.add(answer["mode"])
                for leg, ms in answer["stats"]["ms"].items():
                    legs.setdefault(leg, []).append(ms)
                for leg, n in answer["stats"]["candidates"].items():
                    candidates.setdefault(leg, []).append(n)
        results[mode] = {
            **timing(times),
            "answered_as": sorted(answered),
            "legs_ms": {leg: timing(ms) for leg, ms in legs.items()},
            "candidates_p50": {leg: statistics.median(n) for leg, n in candidates.items()},
        }
        log(f"  {mode}: p50 {results[mode]['p50_ms']} ms, p95 {results[mode]['p95_ms']} ms")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--side", type=int, default=10_000, help="turns of the second namespace")
    parser.add_argument("--texts", type=int, default=50_000, help="distinct texts embedded (cached)")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--ef", default="40,64,100,200,400,800", help=f"{EF_SETTING} values, 1-1000")
    parser.add_argument("--target", type=float, default=0.95, help="the recall chosen_ef must reach")
    parser.add_argument("--index", default=None, help="HNSW build parameters, e.g. m=16,ef_construction=64")
    parser.add_argument("--no-contexts", action="store_true", help="leave the turns' contexts NULL")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep-home", action="store_true")
    args = parser.parse_args()
    efs = sorted({int(ef) for ef in args.ef.split(",")})
    index_with = hnsw_options(args.index)
    if os.environ.get(EF_SETTING):
        raise SystemExit(f"unset {EF_SETTING}: the benchmark sets it itself")
    if not all(1 <= ef <= 1000 for ef in efs):
        raise SystemExit(f"--ef {args.ef}: each from 1 to 1000 (pgvector's range)")

    from pipelines import search

    if args.turns <= search.EXACT_SCAN_ROWS:
        log(f"--turns {args.turns:,} is an exact scan (at most EXACT_SCAN_ROWS): ef_search changes nothing")

    from providers.embedders import get_embedder

    started_all = time.perf_counter()
    embedder = get_embedder()
    texts, vectors, cache = embedded_texts(embedder, args.data, args.texts, args.seed)
    rng = np.random.default_rng(args.seed)
    out: dict = {
        "turns": args.turns,
        "side": args.side,
        "texts": len(texts),
        "model": embedder.name,
        "precision": getattr(embedder, "precision", None),
        "cache": cache,
        "hnsw_with": index_with.strip() or "the migration's (its definition under indexes)",
        "index_branch": args.turns > search.EXACT_SCAN_ROWS,
        "code": code_version(),
    }
    log(f"measuring the stand-in on {STAND_IN_SAMPLES} pairs")
    out["stand_in"] = stand_in(embedder, texts, vectors, rng)
    log(f"  {out['stand_in']}")
    rows = Rows(texts, vectors, args.turns, args.side, rng)

    questions = list(dict.fromkeys(r["question"] for r in load_records(args.data)))
    random.Random(args.seed).shuffle(questions)
    questions = questions[: args.queries]
    queries = np.asarray(embedder.embed(questions), dtype=np.float32)
    out["queries"] = len(questions)

    with embedded_database("search-scale", args.keep_home) as url:
        build(url, rows, embedder.name, index_with, not args.no_contexts, out)
        log("the exact top 50 of every query (numpy)")
        started = time.perf_counter()
        truth = exact(rows, queries, max(LIMITS))
        out["exact_scan_s"] = round(time.perf_counter() - started, 1)
        log(f"the semantic leg (by_vector) for ef_search {efs}")
        out["sweep"] = sweep(rows, queries, truth, embedder.name, efs)
        ef, reached = chosen_ef(out["sweep"], args.target)
        out["target"], out["chosen_ef"], out["target_reached"] = args.target, ef, reached
        log("conversation.search at the default settings")
        out["modes"] = {"default": modes(questions)}
        if ef != default_ef():
            log(f"conversation.search at {EF_SETTING}={ef}")
            ef_setting(ef)
            out["modes"][f"ef_{ef}"] = modes(questions, ("hybrid", "semantic"))  # lexical: the same
            ef_setting(None)
    out["total_s"] = round(time.perf_counter() - started_all, 1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
