"""conversation.threads: newest first, windows, agents, and blank excerpts for high turns.

Each test writes into a namespace of its own, so it passes alone and in any order."""

import re
from datetime import timedelta

import pytest
from freezegun import freeze_time

from models.base import utcnow
from ops.caller import OPERATOR
from ops.registry import call
from tests.support.calls import append, enable_logging

SECRET = "password=Tr0ub4dor&3xyz"


@pytest.fixture
def ns(request) -> str:
    """A recording namespace of this test's own."""
    name = "th-" + re.sub(r"\W", "-", request.node.name)[:100]
    enable_logging(name)
    return name


def threads(namespace: str, **body) -> list[dict]:
    return call("conversation.threads", OPERATOR, {"namespace": namespace, **body})["threads"]


def ids(namespace: str, **body) -> list[str]:
    return [t["thread_id"] for t in threads(namespace, **body)]


def test_threads_are_listed_newest_first_with_their_last_turn(ns):
    with freeze_time(utcnow() - timedelta(days=10)):
        append(ns, "old", "an old thread")
    append(ns, "new", "first words")
    append(ns, "new", "latest words", role="assistant")
    listed = threads(ns)
    assert [t["thread_id"] for t in listed] == ["new", "old"]
    assert listed[0]["last_turn"]["excerpt"] == "latest words" and listed[0]["turn_count"] == 2
    assert listed[0]["last_turn"]["role"] == "assistant"
    assert listed[1]["last_turn"]["excerpt"] == "an old thread" and listed[1]["turn_count"] == 1
    assert ids(ns, window_days=7) == ["new"]
    assert ids(ns, window_days=11) == ["new", "old"]
    assert ids(ns, offset=1, limit=1) == ["old"]
    assert ids(ns, limit=1) == ["new"]


def test_threads_filter_by_agent_and_star_lists_every_agent(ns):
    append(ns, "by-default", "from the default agent")
    append(ns, "by-claude", "from claude", agent="claude")
    append(ns, "joined", "opened by the default agent")
    append(ns, "joined", "claude joined later", agent="claude")
    assert sorted(ids(ns)) == ["by-default", "joined"]
    assert sorted(ids(ns, agent="default")) == ["by-default", "joined"]
    assert sorted(ids(ns, agent="claude")) == ["by-claude", "joined"]
    assert ids(ns, agent="nobody") == []
    assert sorted(ids(ns, agent="*")) == ["by-claude", "by-default", "joined"]


def test_a_last_turn_that_reads_as_high_is_listed_with_an_empty_excerpt(ns):
    append(ns, "leaky", SECRET)
    append(ns, "leaky-late", "x" * 1000 + " " + SECRET)  # past the 240 shown, within 1,024 more
    append(ns, "leaky-far", "y" * 1400 + " " + SECRET)  # beyond what is checked: shown as usual
    append(ns, "clean", "nothing to hide here")
    by_id = {t["thread_id"]: t for t in threads(ns, limit=50)}
    assert by_id["leaky"]["last_turn"]["excerpt"] == ""
    assert by_id["leaky-late"]["last_turn"]["excerpt"] == ""
    assert by_id["leaky-far"]["last_turn"]["excerpt"] == "y" * 240
    assert by_id["clean"]["last_turn"]["excerpt"] == "nothing to hide here"


def test_a_title_that_reads_as_high_is_listed_as_empty(ns):
    call("conversation.create", OPERATOR, {"namespace": ns, "thread_id": "titled", "title": SECRET})
    call("conversation.create", OPERATOR, {"namespace": ns, "thread_id": "plain", "title": "Ledger move"})
    by_id = {t["thread_id"]: t for t in threads(ns, limit=50)}
    assert by_id["titled"]["title"] is None and by_id["titled"]["last_turn"] is None
    assert by_id["plain"]["title"] == "Ledger move"


def test_get_and_list_still_serve_a_high_turn_in_its_thread(ns):
    append(ns, "leaky", "before the secret")
    append(ns, "leaky", SECRET, role="assistant")
    body = {"namespace": ns, "thread_id": "leaky"}
    messages = call("conversation.list", OPERATOR, body)["messages"]
    assert [(m["content"], m["sensitivity"]) for m in messages] == [
        ("before the secret", "none"),
        (SECRET, "high"),
    ]
    got = call("conversation.get", OPERATOR, {**body, "include_messages": True, "order": "desc"})
    assert [m["content"] for m in got["messages"]] == [SECRET, "before the secret"]
