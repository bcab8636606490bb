"""The lexical leg's corpus statistics agree with the document frequencies they are combined with:
a namespace searched while empty and then filled at once (a new user's first minute) ranks each
turn first by its own text, in lexical and in the default (hybrid) mode."""

import random

import pytest

from ops.caller import OPERATOR
from ops.registry import call
from tests.integration.conftest import append, enable_logging

WORDS = (
    "harbor lantern orchard pepper violin glacier saddle thimble canyon ember walnut falcon "
    "meadow copper riddle blossom anchor quartz velvet tundra pickle marble comet willow badger "
    "cobalt jigsaw nectar pebble raven sprocket tulip umbrella vortex wicker yarrow zephyr"
).split()


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_a_namespace_searched_empty_then_filled_ranks_each_turn_first_by_its_own_text(mode):
    namespace = f"fresh-{mode}"
    enable_logging(namespace)
    search = {"namespace": namespace, "limit": 5, "search_mode": mode}
    assert call("conversation.search", OPERATOR, search | {"query": "harbor lantern"})["hits"] == []
    pick = random.Random(7)
    texts = [" ".join(pick.sample(WORDS, 6)) + f" note {i}" for i in range(600)]
    for i, text in enumerate(texts):
        append(namespace, f"t{i % 30}", text, msg_id=f"m{i}")
    firsts = [
        call("conversation.search", OPERATOR, search | {"query": texts[i]})["hits"][0]["msg_id"]
        for i in range(0, 600, 30)
    ]
    assert firsts == [f"m{i}" for i in range(0, 600, 30)]
