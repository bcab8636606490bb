"""Settings other than the defaults, and the ``agent`` field, change the answers: the similarity
floor of conversation.search, the candidates of its vector leg's HNSW walk, the excerpt length of
search hits and thread listings, and which agent's turns search shows (threads: test_threads.py).

Turns are embedded synchronously by the stage's function with the OpenAI-compatible fake (a
deterministic bag of words), and every test writes into a namespace of its own."""

import pytest
from pydantic import ValidationError
from sqlalchemy import event
from sqlmodel import col, select

from models import db
from models.settings import get_settings
from models.stage_run import SUCCEEDED, StageRun
from ops.caller import OPERATOR
from ops.registry import call
from pipelines import search as pipelines_search
from tests.support.calls import append, enable_logging
from tests.support.rows import embedding_subject

FLOOR = "LOOM_CONVERSATION_SEARCH_MIN_SIMILARITY"
EXCERPT = "LOOM_CONVERSATION_SEARCH_EXCERPT_CHARS"
EF_SEARCH = "LOOM_CONVERSATION_SEARCH_EF_SEARCH"
SECRET = "password=Tr0ub4dor&3xyz"


@pytest.fixture
def setting(monkeypatch):
    """Set a LOOM_* variable for this test only; the settings are read again at once."""

    def set_to(name: str, value: object) -> None:
        monkeypatch.setenv(name, str(value))
        get_settings.cache_clear()

    yield set_to
    for name in (FLOOR, EXCERPT, EF_SEARCH):
        monkeypatch.delenv(name, raising=False)
    get_settings.cache_clear()


def embedded(namespace: str, *turns: tuple[str, str, dict]) -> list[int]:
    """Append (thread, content, extra) turns and embed them now, in this process."""
    from workers.stages.embedding import embed_turns

    enable_logging(namespace)
    ids = [append(namespace, thread, content, **extra)["turn_id"] for thread, content, extra in turns]
    subjects = [embedding_subject(turn_id) for turn_id in ids]
    with db.session() as s:
        runs = s.exec(select(StageRun.id).where(col(StageRun.subject).in_(subjects))).all()
    embed_turns(list(runs))
    with db.session() as s:
        statuses = s.exec(select(StageRun.status).where(col(StageRun.subject).in_(subjects))).all()
    assert statuses == [SUCCEEDED] * len(ids)
    return ids


def search(namespace: str, query: str, **body) -> dict:
    body = {"namespace": namespace, "query": query, "limit": 50, "search_mode": "semantic", **body}
    return call("conversation.search", OPERATOR, body)


def test_the_similarity_floor_setting_decides_which_hits_are_kept(openai_embedder, setting):
    texts = [
        "invoices ledger",
        "the invoices moved to the new ledger",
        "the garden ledger of last summer",
        "tomatoes need full sun and regular watering",
    ]
    embedded("floor", *(("t", text, {}) for text in texts))
    setting(FLOOR, -1)  # every embedded turn passes
    every = search("floor", "invoices ledger")["hits"]
    assert sorted(h["excerpt"] for h in every) == sorted(texts)
    similarity = {h["excerpt"]: h["similarity"] for h in every}
    assert similarity["invoices ledger"] == pytest.approx(1.0)
    assert similarity["tomatoes need full sun and regular watering"] < 0.30

    def kept(floor: float) -> list[str]:
        return [h["excerpt"] for h in every if h["similarity"] >= floor]

    setting(FLOOR, 0.30)  # the default, set explicitly
    assert [h["excerpt"] for h in search("floor", "invoices ledger")["hits"]] == kept(0.30)
    ranked = sorted(similarity.values(), reverse=True)
    for between in zip(ranked, ranked[1:], strict=False):
        floor = sum(between) / 2  # halfway between two hits' similarities
        setting(FLOOR, floor)
        assert [h["excerpt"] for h in search("floor", "invoices ledger")["hits"]] == kept(floor), floor
    setting(FLOOR, 0.999)
    assert [h["excerpt"] for h in search("floor", "invoices ledger")["hits"]] == ["invoices ledger"]


def test_the_ef_search_setting_reaches_the_vector_legs_walk(openai_embedder, setting, monkeypatch):
    embedded("walk", ("t", "invoices moved to the ledger", {}), ("t", "the garden ledger", {}))
    monkeypatch.setattr(pipelines_search, "EXACT_SCAN_ROWS", 0)  # every scope through the index
    walks: list[int] = []

    def seen(conn, cursor, statement, parameters, context, executemany) -> None:
        if "hnsw.ef_search" in statement:
            walks.append(int(parameters["ef_search"]))

    def walk(**body) -> int:
        walks.clear()
        hits = search("walk", "invoices ledger", **body)["hits"]
        assert hits and hits[0]["excerpt"] == "invoices moved to the ledger"
        (ef_search,) = walks
        return ef_search

    event.listen(db.get_engine(), "before_cursor_execute", seen)
    try:
        assert walk(limit=10) == 250  # the default
        assert walk(limit=10, search_mode="hybrid") == 250  # the default, for its pool of 50 too
        setting(EF_SEARCH, 123)
        assert walk(limit=10) == 123
        assert walk(limit=10, search_mode="hybrid") == 123
        assert walk(limit=100) == 123  # whatever the page asked: a short page is the start of a long one
        setting(EF_SEARCH, 1)
        assert walk(limit=10) == 1  # and the iterative scan walks on until the page is full
    finally:
        event.remove(db.get_engine(), "before_cursor_execute", seen)


def test_the_ef_search_setting_is_bounded_by_pgvectors_range(setting):
    for value in (0, 1001):
        setting(EF_SEARCH, value)
        with pytest.raises(ValidationError):
            get_settings()


def test_the_excerpt_setting_cuts_search_hits_and_thread_listings(openai_embedder, setting):
    long = " ".join(f"ledger{i}" for i in range(120))  # 8xx characters, no two words alike
    embedded("excerpt", ("long", long, {}))
    call("conversation.create", OPERATOR, {"namespace": "excerpt", "thread_id": "titled", "title": "T" * 100})

    def excerpts() -> tuple[str, str, str, str | None]:
        vector = search("excerpt", long)
        openai_embedder.mode = "fail"
        substring = search("excerpt", "ledger7 ledger8")
        openai_embedder.mode = "ok"
        assert (vector["mode"], substring["mode"]) == ("vector", "substring")
        threads = call("conversation.threads", OPERATOR, {"namespace": "excerpt"})["threads"]
        listed = {t["thread_id"]: t for t in threads}
        return (
            vector["hits"][0]["excerpt"],
            substring["hits"][0]["excerpt"],
            listed["long"]["last_turn"]["excerpt"],
            listed["titled"]["title"],
        )

    assert excerpts() == (long[:240], long[:240], long[:240], "T" * 100)  # the default
    setting(EXCERPT, 50)
    assert excerpts() == (long[:50], long[:50], long[:50], "T" * 50)
    setting(EXCERPT, 500)
    assert excerpts() == (long[:500], long[:500], long[:500], "T" * 100)


def test_the_excerpt_setting_moves_the_window_a_listing_screens(setting):
    enable_logging("window")
    # The secret starts at 1,101: within the 240 shown and 1,024 past them, beyond 50 and 1,024.
    append("window", "leaky", "y" * 1100 + " " + SECRET)

    def shown() -> str:
        (thread,) = call("conversation.threads", OPERATOR, {"namespace": "window"})["threads"]
        return thread["last_turn"]["excerpt"]

    assert shown() == ""
    setting(EXCERPT, 50)
    assert shown() == "y" * 50


def test_search_shows_the_agent_asked_for_and_star_shows_every_agent(openai_embedder):
    embedded(
        "agents-search",
        ("t", "invoices moved to the ledger by the default agent", {}),
        ("t", "invoices moved to the ledger by claude", {"agent": "claude"}),
    )

    def agents(**body) -> list[str]:
        return sorted(h["agent"] for h in search("agents-search", "invoices ledger", **body)["hits"])

    assert agents() == ["claude", "default"]  # no agent named: every agent's turns
    assert agents(agent="*") == ["claude", "default"]
    assert agents(agent="claude") == ["claude"]
    assert agents(agent="default") == ["default"]
