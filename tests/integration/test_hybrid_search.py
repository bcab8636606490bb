"""conversation.search's lexical (BM25 over the whole text) and hybrid (reciprocal-rank fusion)
modes, on the real database and the local embedder: an exact term deep in a long turn ranks, the
filters and screening hold in the lexical leg, hits say which leg found them, and the answer
carries per-leg stats."""

import pytest

from models.settings import get_settings
from ops.caller import Caller
from ops.registry import call
from tests.support.calls import append, enable_logging
from tests.support.waits import worked_off

NS, OTHER = "hybrid", "hybrid-other"
PADDING = "we talked about the rollout plan and the staging environment at length. " * 60
DEEP = PADDING + "The failing table is invoice_lines_2024 and the ticket is OPS-7731."
SECRET = "the deploy key is sk-proj-AbCdEf1234567890GhIjKlMnOpQrStUvWxYz12 for OPS-7731"


@pytest.fixture(scope="module")
def corpus(broker, database):
    for namespace in (NS, OTHER):
        enable_logging(namespace)
    append(NS, "incident", DEEP, role="assistant", msg_id="deep")
    append(NS, "incident", "Which ticket tracks the broken invoice export?", msg_id="question")
    append(
        NS,
        "incident",
        "Deployments of the billing service happen on Tuesdays.",
        msg_id="deploys",
        run_id="r9",
    )
    append(NS, "garden", "Tomatoes want full sun; water them at dawn.", msg_id="tomatoes")
    append(NS, "incident", "OPS-7731 system note", role="system", msg_id="system")
    append(NS, "incident", SECRET, msg_id="secret")
    append(OTHER, "incident", "OPS-7731 is also mentioned over here.", msg_id="elsewhere")
    # One text said in two threads, the newer copy appended first (the lower id): an import of
    # older history after it, say.
    for thread, said in (
        ("copy-new", "2026-03-02T10:00:00+00:00"),
        ("copy-old", "2026-03-01T10:00:00+00:00"),
    ):
        append(NS, thread, "The lighthouse keeper rows to Skellig at dawn.", msg_id="copy", ts=said)
    worked_off(broker)


ME = Caller(role="viewer", namespaces=(NS,))


def search(**body) -> dict:
    return call("conversation.search", ME, {"namespace": NS, **body})


def test_an_exact_term_deep_in_a_long_turn_ranks_first_lexically_with_its_excerpt_around_it(corpus):
    answer = search(query="OPS-7731", search_mode="lexical")
    assert answer["mode"] == "lexical"
    (hit,) = answer["hits"]  # not the system note, not the secret, not another namespace
    assert hit["msg_id"] == "deep" and hit["found_by"] == ["lexical"] and hit["lexical_rank"] == 1
    assert "OPS-7731" in hit["excerpt"] and hit["similarity"] is None and hit["lexical_score"] > 0
    assert answer["stats"]["candidates"] == {"lexical": 1} and "lexical" in answer["stats"]["ms"]


def test_stemming_matches_other_forms_of_a_word(corpus):
    hits = search(query="deploying billing", search_mode="lexical")["hits"]
    assert hits[0]["msg_id"] == "deploys"


def test_the_lexical_leg_keeps_the_filters(corpus):
    assert [h["msg_id"] for h in search(query="billing", search_mode="lexical", run_id="r9")["hits"]] == [
        "deploys"
    ]
    assert search(query="billing", search_mode="lexical", thread_id="garden")["hits"] == []
    assert search(query="tomatoes", search_mode="lexical", role="assistant")["hits"] == []


def test_hybrid_fuses_both_legs_and_says_which_found_each_hit(corpus):
    answer = search(query="which ticket is about the invoice_lines_2024 table", search_mode="hybrid")
    assert answer["mode"] == "hybrid"
    hits = answer["hits"]
    assert hits[0]["msg_id"] in ("deep", "question")
    deep = next(h for h in hits if h["msg_id"] == "deep")
    assert "lexical" in deep["found_by"] and deep["score"] > 0
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    assert set(answer["stats"]["candidates"]) == {"semantic", "lexical"}
    assert {"embed", "semantic", "lexical"} <= set(answer["stats"]["ms"])


def test_hybrid_drops_a_hit_that_matches_nothing_and_keeps_the_floor_for_the_vector_legs_own(corpus):
    assert search(query="zorbleflux quantavine", search_mode="hybrid")["hits"] == []
    floor = get_settings().conversation_search_min_similarity
    hits = search(query="which ticket tracks the tomatoes", search_mode="hybrid", limit=20)["hits"]
    assert hits and all("lexical" in h["found_by"] or h["similarity"] >= floor for h in hits)


def test_the_lexical_weight_moves_the_fusion(corpus):
    query = "OPS-7731 tomatoes sun"
    lexical = [h["msg_id"] for h in search(query=query, search_mode="lexical", limit=20)["hits"]]
    all_lexical = search(query=query, search_mode="hybrid", lexical_weight=1.0, limit=20)["hits"]
    # Weight 1: the BM25 leg's order first, the vector leg's own finds after it.
    assert [h["msg_id"] for h in all_lexical[: len(lexical)]] == lexical
    assert all(h["lexical_rank"] is None for h in all_lexical[len(lexical) :])
    # Weight 0: the vector leg's order, whatever BM25 thinks.
    all_semantic = search(query=query, search_mode="hybrid", lexical_weight=0.0, limit=20)["hits"]
    ranks = [h["semantic_rank"] for h in all_semantic if h["semantic_rank"] is not None]
    assert ranks == sorted(ranks) and ranks[0] == 1 and all_semantic[0]["semantic_rank"] == 1


@pytest.mark.parametrize("mode", ["semantic", "lexical", "hybrid"])
def test_of_equally_relevant_copies_of_a_text_the_newest_comes_first_in_every_mode(corpus, mode):
    hits = search(query="The lighthouse keeper rows to Skellig at dawn.", search_mode=mode)["hits"]
    assert [h["thread_id"] for h in hits[:2]] == ["copy-new", "copy-old"], hits[:2]
    if mode != "lexical":
        assert hits[0]["similarity"] == hits[1]["similarity"]
    if mode != "semantic":
        assert hits[0]["lexical_score"] == hits[1]["lexical_score"]


def test_a_query_of_stop_words_only_finds_nothing_lexically(corpus):
    answer = search(query="the and of", search_mode="lexical")
    assert answer["hits"] == [] and answer["stats"]["candidates"] == {"lexical": 0}


def test_a_document_frequency_past_the_exact_count_is_estimated_from_the_tables_statistics(
    corpus, monkeypatch
):
    """Counted exactly below EXACT_DF; past it, the word's share of the turns as ANALYZE found it,
    scaled to the corpus."""
    from sqlalchemy import text

    from models import db
    from pipelines import lexical

    for i in range(40):
        append(NS, "orchard", f"apples number {i} ripen in autumn", msg_id=f"apple-{i}")
    with db.session() as s:
        s.execute(text("ANALYZE turns"))
        s.commit()
    monkeypatch.setattr(lexical, "EXACT_DF", 5)
    monkeypatch.setattr(lexical, "_shares", (float("-inf"), {}))  # read the statistics again
    monkeypatch.setattr(lexical, "_corpus", {})  # and count the corpus again
    with db.session() as s:
        n = lexical.corpus(s, [NS]).n
        dfs = lexical.frequencies(
            s, ["appl", "tomato"], "t.namespace = ANY(:namespaces)", {"namespaces": [NS]}, n
        )
        share = lexical.table_shares(s)["appl"]
    assert dfs["tomato"] == 1  # counted
    assert dfs["appl"] == min(n, max(5, round(share * n))) and dfs["appl"] > 5  # estimated, not the cap
