"""The lexical leg's corpus statistics agree with the document frequencies they are combined with:
a namespace searched while empty and then filled at once (a new user's first minute) ranks each
turn first by its own text, in lexical and in the default (hybrid) mode."""

import random

from sqlalchemy import text as sql

from models import db
from ops.caller import OPERATOR
from ops.registry import call
from pipelines import lexical, search
from tests.support.calls import append, enable_logging
from tests.support.waits import settled, wait_until

WORDS = (
    "harbor lantern orchard pepper violin glacier saddle thimble canyon ember walnut falcon "
    "meadow copper riddle blossom anchor quartz velvet tundra pickle marble comet willow badger "
    "cobalt jigsaw nectar pebble raven sprocket tulip umbrella vortex wicker yarrow zephyr"
).split()


def fill(namespace: str, threads: int) -> list[str]:
    """600 turns of six words of WORDS each, appended at once over ``threads`` threads."""
    pick = random.Random(7)
    texts = [" ".join(pick.sample(WORDS, 6)) + f" note {i}" for i in range(600)]
    for i, text in enumerate(texts):
        append(namespace, f"t{i % threads}", text, msg_id=f"m{i}")
    return texts


def firsts(search: dict, texts: list[str]) -> list[str]:
    """The first hit of a search by each 30th turn's own text."""
    return [
        call("conversation.search", OPERATOR, search | {"query": texts[i]})["hits"][0]["msg_id"]
        for i in range(0, len(texts), 30)
    ]


def test_the_lexical_leg_of_a_namespace_searched_empty_then_filled_ranks_each_turn_first():
    # A thread a turn: no turn's context holds another's words (WORDS are few, so a turn's
    # successor would often share its words and hold the rest as context).
    search = {"namespace": "fresh-lexical", "limit": 5, "search_mode": "lexical"}
    enable_logging(search["namespace"])
    assert call("conversation.search", OPERATOR, search | {"query": "harbor lantern"})["hits"] == []
    texts = fill(search["namespace"], threads=600)
    assert firsts(search, texts) == [f"m{i}" for i in range(0, 600, 30)]


def test_the_default_search_of_a_namespace_searched_empty_then_filled_ranks_each_turn_first(worker):
    search = {"namespace": "fresh-hybrid", "limit": 5}
    enable_logging(search["namespace"])
    assert call("conversation.search", OPERATOR, search | {"query": "harbor lantern"})["hits"] == []
    texts = fill(search["namespace"], threads=30)
    wait_until(settled, what="the turns' embeddings")  # seconds: within the minute statistics were kept
    assert firsts(search, texts) == [f"m{i}" for i in range(0, 600, 30)]


def test_the_lexical_leg_is_planned_for_each_query_on_a_connection_that_ran_it_often():
    """psycopg prepares a statement run 5 times on a connection, and PostgreSQL may then plan it
    once for any words: such a generic plan of the document frequencies read every partition for
    each word (706 ms against 105 ms at 31,000 turns). Each query's words are planned for."""
    namespace = "planned-lexical"
    enable_logging(namespace)
    texts = fill(namespace, threads=20)
    with db.session() as s:
        for text in texts[:15]:
            assert search.by_lexical(s, text, search.Filters([namespace]), 5)
        plans = s.exec(sql("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")).all()
    # The document frequencies and the BM25 ranking, each prepared once it ran 5 times.
    lexical = [row for row in plans if "FROM unnest(CAST(" in row.statement and "LIMIT" in row.statement]
    assert len(lexical) == 2, plans
    assert all(row.custom_plans >= 10 and row.generic_plans == 0 for row in lexical), lexical


def test_the_corpus_is_counted_again_once_its_turns_moved_by_more_than_the_drift():
    namespace = "drifting-lexical"
    enable_logging(namespace)
    for i in range(200):
        append(namespace, f"t{i % 10}", f"note {i} about the harbor", msg_id=f"m{i}")

    def counted() -> int:
        with db.session() as s:
            return lexical.corpus(s, [namespace]).n

    assert counted() == 200
    append(namespace, "t0", "one more note", msg_id="m200")
    assert counted() == 200  # 0.5 % moved: the figures kept still stand
    append(namespace, "t1", "and another", msg_id="m201")
    append(namespace, "t2", "and a third", msg_id="m202")
    assert counted() == 203  # 1.5 %: counted again
