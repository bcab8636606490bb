"""The vector leg restricted to a small scope beside a large one: a tenant's search must not depend on
how much other tenants hold. The scopes hold synthetic vectors written straight into the tables (what
is tested is the plan, not the embedder): a large namespace crowded around the query's direction and
a small one farther off, so that a walk of the HNSW graph meets thousands of the large namespace's
rows before any of the small one's."""

from datetime import UTC, datetime

import pytest
from sqlalchemy import text

from models import db, partitions
from pipelines import search

MODEL = "synthetic"
BIG, SMALL = 6_000, 400
# Stand-ins for scale, so that a few thousand rows behave as a million would: the index gives up
# after SCAN_BUDGET rows (pgvector's default is 20,000), and a scope of more than EXACT_SCAN_ROWS
# messages goes through the index (pipelines.search.EXACT_SCAN_ROWS).
SCAN_BUDGET = 1_000
EXACT_SCAN_ROWS = 2_000


@pytest.fixture(autouse=True)
def at_scale(monkeypatch):
    monkeypatch.setattr(search, "EXACT_SCAN_ROWS", EXACT_SCAN_ROWS)


DIMS = 384
SPREAD = 16  # the noise spans this many axes: real embeddings, too, lie near a space of few dimensions


def _fill(namespace: str, rows: int, pull: float, threads: int) -> None:
    """``rows`` turns with embeddings: each vector is noise plus ``pull`` times the query's
    direction (the first axis), spread over ``threads`` threads and both roles."""
    with db.session() as s:
        s.exec(
            text(
                """
                INSERT INTO turns (namespace, thread_id, agent, msg_id, role, content, metadata,
                                   sensitivity, screened_with, ts)
                SELECT :ns, 't' || (i % :threads), 'a', 'm' || i,
                       CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END,
                       'synthetic turn ' || i, '{}', 'none', 1, now()
                FROM generate_series(1, :rows) i
                """
            ).bindparams(ns=namespace, threads=threads, rows=rows)
        )
        s.exec(
            text(
                """
                INSERT INTO embeddings (turn_id, namespace, thread_id, agent, msg_id, role, run_id,
                                        text, digest, model, vector, created_at, embedded_at)
                SELECT t.id, t.namespace, t.thread_id, t.agent, t.msg_id, t.role, t.run_id,
                       t.content, md5(t.content), :model,
                       (SELECT array_agg(CASE WHEN d = 1 THEN :pull ELSE 0 END
                                         + CASE WHEN d <= :spread THEN random() - 0.5 ELSE 0 END)
                        FROM generate_series(1, :dims) d WHERE t.id > 0)::vector,
                       now(), now()
                FROM turns t WHERE t.namespace = :ns
                """
            ).bindparams(ns=namespace, model=MODEL, pull=pull, dims=DIMS, spread=SPREAD)
        )
        s.commit()


@pytest.fixture(scope="module")
def scopes(database):
    with db.autocommit() as conn:
        partitions.ensure(conn, datetime.now(UTC))
    _fill("big", BIG, pull=3.0, threads=50)
    _fill("small", SMALL, pull=0.5, threads=4)
    with db.session() as s:
        s.exec(text("ANALYZE turns"))
        s.exec(text("ANALYZE embeddings"))
        s.commit()


QUERY = [1.0] + [0.0] * (DIMS - 1)


def _exact(f: search.Filters, limit: int) -> list[str]:
    """The exact top ``limit`` message ids in scope, by a scan that reads every row."""
    scope, params = search.scope_sql(f)
    with db.session() as s:
        s.exec(text("SET LOCAL enable_indexscan = off"))
        rows = s.exec(
            text(
                f"""SELECT t.msg_id FROM embeddings e JOIN turns t ON t.id = e.turn_id
                    WHERE {scope} AND e.model = :model
                    ORDER BY e.vector <=> CAST(:query AS vector) LIMIT :limit"""
            ).bindparams(**params, model=MODEL, query=str(QUERY), limit=limit)
        )
        return list(rows.scalars())


def _searched(f: search.Filters, limit: int) -> list[str]:
    with db.session() as s:
        s.exec(text(f"SET LOCAL hnsw.max_scan_tuples = {SCAN_BUDGET}"))
        return [h.msg_id for h in search.by_vector(s, QUERY, MODEL, f, limit, -1.0)]


@pytest.mark.parametrize(
    "scope",
    [
        search.Filters(["small"]),
        search.Filters(["small"], thread_id="t1"),
        search.Filters(["small"], role="assistant"),
        search.Filters(["big"], thread_id="t7"),
        search.Filters(["big"], agent="a", thread_id="t3"),
    ],
    ids=["namespace", "thread", "role", "thread-of-big", "agent-of-big"],
)
def test_a_selective_scope_gets_the_exact_top_hits(scopes, scope):
    exact = _exact(scope, 10)
    assert len(exact) == 10
    assert _searched(scope, 10) == exact


def test_the_large_namespace_still_gets_its_nearest_through_the_index(scopes):
    exact = _exact(search.Filters(["big"]), 10)
    found = _searched(search.Filters(["big"]), 10)
    assert len(set(found) & set(exact)) >= 9  # HNSW is approximate; its recall here is near 1
