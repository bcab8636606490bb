"""pipelines.hybrid runs a corpus's two legs at once when its legs read on connections of their own
(``side_by_side``), and one after the other when they share one."""

import threading

import pytest

from pipelines import hints, hybrid
from pipelines.search import Hit


def corpus(side_by_side: bool, meeting: threading.Barrier) -> hybrid.Corpus[Hit]:
    """Legs that each wait for the other to have started: they finish only when run at once."""

    def leg(*_args) -> list[Hit]:
        meeting.wait()
        return []

    return hybrid.Corpus(
        by_vector=leg,
        by_lexical=leg,
        key=lambda hit: hit.msg_id,
        said=lambda hit: hints.Origin(hit.ts),
        side_by_side=side_by_side,
    )


QUERY = hybrid.Query("anything", "hybrid", 10, hybrid.LEXICAL_WEIGHT, [0.0] * 4, "model")


def test_legs_on_connections_of_their_own_are_read_at_once():
    clock = hybrid.Clock()
    ranked = hybrid.search(corpus(True, threading.Barrier(2, timeout=10)), QUERY, clock)
    assert ranked.mode == "hybrid" and ranked.candidates == {"semantic": 0, "lexical": 0}
    assert {"semantic", "lexical"} <= clock.ms.keys()


def test_legs_sharing_a_connection_are_read_one_after_the_other():
    with pytest.raises(threading.BrokenBarrierError):
        hybrid.search(corpus(False, threading.Barrier(2, timeout=0.5)), QUERY, hybrid.Clock())
