"""conversation.search: cosine floor, filters, fan-out, excerpts, screening, the fallback."""

import re

import pytest

from models.settings import get_settings
from ops.caller import Caller
from ops.errors import OpError
from ops.registry import call
from tests.support.calls import append, enable_logging
from tests.support.waits import worked_off

SECRET = "the deploy key is sk-proj-AbCdEf1234567890GhIjKlMnOpQrStUvWxYz12 for invoices"


@pytest.fixture(scope="module")
def corpus(broker, database):
    """Two namespaces of turns, embedded by a real worker with the local model."""
    for namespace in ("alpha", "beta", "gamma"):
        enable_logging(namespace)
    append("alpha", "billing", "We moved the invoices to the new ledger last week.", run_id="r1")
    append("alpha", "billing", "The export job still reads invoices from the old ledger.", role="assistant")
    append("alpha", "billing", "Ledger " + "long " * 100 + "tail words")
    append("alpha", "garden", "Tomatoes need full sun and regular watering.", run_id="r2")
    append("alpha", "garden", "ledger invoices: a system note", role="system")
    append("alpha", "billing", SECRET)
    append("beta", "other", "Invoices for the beta team are on the ledger too.")
    append("gamma", "other", "Invoices in gamma, a namespace this caller does not have.")
    worked_off(broker)


ME = Caller(role="viewer", namespaces=("alpha", "beta"))


def search(**body) -> dict:
    """The semantic mode (this module's subject; tests/integration/test_hybrid_search.py has the others)."""
    return call("conversation.search", ME, {"search_mode": "semantic", **body})


def test_hits_rank_by_cosine_similarity_and_carry_what_a_client_needs(corpus):
    answer = search(query="moving invoices to a new ledger", namespace="alpha")
    assert answer["mode"] == "vector"
    hits = answer["hits"]
    assert hits[0]["excerpt"] == "We moved the invoices to the new ledger last week."
    assert [h["similarity"] for h in hits] == sorted((h["similarity"] for h in hits), reverse=True)
    assert set(hits[0]) >= {"namespace", "thread_id", "msg_id", "role", "ts", "similarity", "excerpt"}


def test_hits_below_the_similarity_floor_are_dropped(corpus):
    floor = get_settings().conversation_search_min_similarity
    hits = search(query="moving invoices to a new ledger", namespace="alpha", limit=50)["hits"]
    assert hits and all(h["similarity"] >= floor for h in hits)
    assert "Tomatoes need full sun and regular watering." not in [h["excerpt"] for h in hits]


def test_search_fans_out_over_the_callers_namespaces_by_default(corpus):
    namespaces = {h["namespace"] for h in search(query="invoices on the ledger", limit=20)["hits"]}
    assert namespaces == {"alpha", "beta"}  # never gamma


def test_filters_by_thread_run_and_role(corpus):
    assert {h["thread_id"] for h in search(query="invoices ledger", thread_id="billing")["hits"]} == {
        "billing"
    }
    by_run = search(query="invoices ledger", run_id="r1")["hits"]
    assert [h["excerpt"][:10] for h in by_run] == ["We moved t"]
    assert {h["role"] for h in search(query="invoices ledger", role="assistant")["hits"]} == {"assistant"}


def test_the_excerpt_is_the_first_240_characters(corpus):
    hits = search(query="ledger long long long tail words", namespace="alpha", thread_id="billing")["hits"]
    long_hit = next(h for h in hits if h["excerpt"].startswith("Ledger long"))
    assert len(long_hit["excerpt"]) == 240


def test_system_turns_and_turns_that_read_as_high_are_never_returned(corpus):
    for answer in (
        search(query="deploy key for invoices", limit=50),
        search(query="a system note", limit=50),
    ):
        excerpts = " ".join(h["excerpt"] for h in answer["hits"])
        assert "sk-proj" not in excerpts and "system note" not in excerpts


def test_when_the_embedder_is_unavailable_a_substring_match_answers_and_says_so(corpus, openai_embedder):
    openai_embedder.mode = "fail"
    answer = search(query="EXPORT JOB")
    assert answer["mode"] == "substring" and "embedder_error" in answer
    assert [h["excerpt"] for h in answer["hits"]] == [
        "The export job still reads invoices from the old ledger."
    ]
    assert answer["hits"][0]["similarity"] is None
    assert search(query="sk-proj-AbCdEf")["hits"] == []  # the fallback never returns a high turn
    assert search(query="a system note")["hits"] == []
    assert search(query="100%_")["hits"] == []  # LIKE wildcards are matched literally


def test_the_namespace_scope_names_one_namespace(corpus):
    hits = search(query="invoices ledger", namespace="beta", limit=20)["hits"]
    assert {h["namespace"] for h in hits} == {"beta"}
    with pytest.raises(OpError) as refused:
        call("conversation.search", ME, {"query": "x", "namespace": "gamma"})
    assert refused.value.status == 403


def fallback_plan(query_text: str, filters) -> str:
    """The plan PostgreSQL makes for the fallback's very statement with its parameters unknown (a
    generic plan, as for a statement prepared once and run many times) when the trigram index is
    the only index it may use: a plan that still reads the whole table means the index cannot
    serve the statement (a partial index whose predicate the statement does not imply, say)."""
    import re

    from sqlalchemy import event, text

    from models import db
    from pipelines import search as pipeline

    seen = []

    def capture(conn, cursor, statement, parameters, context, executemany):
        seen.append((statement, parameters))

    engine = db.get_engine()
    event.listen(engine, "before_cursor_execute", capture)
    try:
        with db.session() as s:
            pipeline.by_substring(s, query_text, filters, 10)
    finally:
        event.remove(engine, "before_cursor_execute", capture)
    (statement, parameters), *_ = [(st, p) for st, p in seen if " ILIKE " in st.upper()]
    names = list(dict.fromkeys(re.findall(r"%\((\w+)\)s", statement)))
    assert set(names) == set(parameters)
    for number, name in enumerate(names, 1):
        statement = statement.replace(f"%({name})s", f"${number}")
    with db.session() as s:
        # Every other index of turns goes, inside this transaction only (rolled back below).
        others = s.exec(
            text(
                """
                SELECT i.indexrelid::regclass::text, c.conname
                FROM pg_index i LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid
                WHERE i.indrelid = 'turns'::regclass AND NOT i.indisprimary
                  AND i.indexrelid <> 'ix_turns_content_trgm'::regclass
                """
            )
        ).all()
        for index, constraint in others:
            drop = f"ALTER TABLE turns DROP CONSTRAINT {constraint}" if constraint else f"DROP INDEX {index}"
            s.exec(text(drop))
        s.exec(text("SET LOCAL enable_seqscan = off"))
        s.exec(text("SET LOCAL enable_indexscan = off"))  # no full walk of the primary key either
        rows = s.connection().exec_driver_sql("EXPLAIN (GENERIC_PLAN) " + statement.replace("%%", "%"))
        plan = "\n".join(row[0] for row in rows)
        s.rollback()
    return plan


def trigram_index_of_each_month() -> set[str]:
    from sqlalchemy import text

    from models import db

    with db.session() as s:
        rows = s.exec(
            text(
                "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                "WHERE i.inhparent = 'ix_turns_content_trgm'::regclass"
            )
        )
        return {name for (name,) in rows}


def test_the_substring_fallback_can_be_served_by_the_trigram_index_whatever_its_parameters():
    from pipelines.search import Filters

    for filters in (
        Filters(["alpha"]),
        Filters(["alpha", "beta"], thread_id="billing", run_id="r1", role="assistant"),
    ):
        plan = fallback_plan("export job", filters)
        # Each month's partition is read through its own copy of ix_turns_content_trgm.
        scanned = re.findall(r"Bitmap Index Scan on (\w+)", plan)
        assert scanned and set(scanned) <= trigram_index_of_each_month() and "Seq Scan" not in plan, plan
