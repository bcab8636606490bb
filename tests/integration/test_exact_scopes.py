"""A scope within ``pipelines.search.EXACT_SCAN_ROWS`` gets its exact nearest messages whatever its
share of the index: here one team's namespace is the whole index (the usual install), its texts near
duplicates of each other (closely related turns: the graph's walk is easily led past the nearest),
and the vectors are written straight into the tables (what is tested is the plan, not the
embedder). Its results must not depend on the page asked for either."""

from datetime import UTC, datetime

import numpy as np
import pytest
from sqlalchemy import event, text

from models import db, partitions
from models.queries.search import VECTOR_INDEX
from pipelines import search

MODEL = "synthetic"
DIMS, SPREAD = 384, 96  # topics differ along SPREAD axes (real embeddings, too, lie near few dimensions)
TOPICS, VARIANTS = 40, 100  # 4,000 turns: each topic's variants are near duplicates
QUERIES = 20


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _near(centres: np.ndarray, rng: np.random.Generator, noise: float) -> np.ndarray:
    """A near duplicate of each centre: the centre plus a little noise along every axis (a norm of
    about ``noise``: a cosine of some 1 - noise² / 2 to the centre)."""
    return _unit(centres + rng.normal(scale=noise / np.sqrt(DIMS), size=centres.shape))


@pytest.fixture(scope="module")
def team(database):
    """One namespace that is the whole index, its statistics analysed; returns its vectors in the
    order of their message ids (``m0``, ``m1``, …)."""
    rng = np.random.default_rng(37)
    centres = np.zeros((TOPICS, DIMS))
    centres[:, :SPREAD] = rng.normal(size=(TOPICS, SPREAD))
    vectors = _near(np.repeat(_unit(centres), VARIANTS, axis=0), rng, noise=0.2)
    with db.autocommit() as conn:
        partitions.ensure(conn, datetime.now(UTC))
    with db.session() as s:
        s.exec(
            text(
                """
                INSERT INTO turns (namespace, thread_id, agent, msg_id, role, content, metadata,
                                   sensitivity, screened_with, ts)
                SELECT 'team', 't' || (i % 40), 'a', 'm' || i,
                       CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END,
                       'related turn ' || i, '{}', 'none', 1, now()
                FROM generate_series(0, :rows - 1) i
                """
            ).bindparams(rows=len(vectors))
        )
        s.exec(
            text(
                """
                INSERT INTO embeddings (turn_id, namespace, thread_id, agent, msg_id, role, run_id,
                                        text, digest, model, vector, created_at, embedded_at)
                SELECT t.id, t.namespace, t.thread_id, t.agent, t.msg_id, t.role, t.run_id,
                       t.content, md5(t.content), :model, CAST(v.vector AS vector), now(), now()
                FROM unnest(CAST(:vectors AS text[])) WITH ORDINALITY AS v(vector, n)
                JOIN turns t ON t.namespace = 'team' AND t.msg_id = 'm' || (v.n - 1)
                """
            ).bindparams(model=MODEL, vectors=[str(list(map(float, v))) for v in vectors])
        )
        s.commit()
        s.exec(text("ANALYZE turns"))
        s.exec(text("ANALYZE embeddings"))
        s.commit()
    return vectors


@pytest.fixture(scope="module")
def queries(team):
    """Questions near one topic's variants each, as closely related as the turns are."""
    rng = np.random.default_rng(7)
    return _near(team[rng.choice(len(team), QUERIES, replace=False)], rng, noise=0.3)


def _nearest(vectors: np.ndarray, query: np.ndarray, found: list[str], limit: int) -> bool:
    """``found`` are ``limit`` of the exact nearest: each at least as near as the exact ``limit``-th
    (PostgreSQL computes in single precision: two near-equal distances may swap places)."""
    similarity = vectors @ query
    kth = np.sort(similarity)[::-1][limit - 1]
    return len(set(found)) == limit and all(similarity[int(m[1:])] >= kth - 1e-6 for m in found)


def _searched(query: np.ndarray, limit: int, statements: list | None = None) -> list[str]:
    def capture(conn, cursor, statement, parameters, context, executemany):
        if statements is not None:
            statements.append((statement, parameters))

    engine = db.get_engine()
    event.listen(engine, "before_cursor_execute", capture)
    try:
        with db.session() as s:
            vector = [float(x) for x in query]
            hits = search.by_vector(s, vector, MODEL, search.Filters(["team"]), limit, -1.0)
    finally:
        event.remove(engine, "before_cursor_execute", capture)
    return [h.msg_id for h in hits]


def test_a_namespace_that_is_the_whole_index_gets_its_exact_nearest_at_every_page(team, queries):
    with db.session() as s:
        indexed = s.exec(text("SELECT count(*) FROM embeddings")).one()[0]
    assert indexed == len(team)  # the namespace is the whole index
    for query in queries:
        longest = _searched(query, 100)
        for limit in (10, 50, 60, 100):
            found = _searched(query, limit)
            assert _nearest(team, query, found, limit)
            assert found == longest[:limit]  # a short page is the start of a long one


def _plan(query: np.ndarray) -> str:
    """The plan of the search's last statement (the one that reads the hits)."""
    statements: list = []
    _searched(query, 10, statements)
    statement, parameters = statements[-1]
    with db.get_engine().raw_connection() as raw:
        cursor = raw.cursor()
        cursor.execute("EXPLAIN " + statement, parameters)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_the_choice_is_the_scope_size_alone(team, queries, monkeypatch):
    """Within the bound, every vector of the scope is measured; one past it, the HNSW index is
    walked (by the index's own expression, or the plan would not use it)."""
    index = f"Index Scan using {VECTOR_INDEX}"
    monkeypatch.setattr(search, "EXACT_SCAN_ROWS", len(team))
    assert index not in _plan(queries[0])
    monkeypatch.setattr(search, "EXACT_SCAN_ROWS", len(team) - 1)
    assert index in _plan(queries[0])
