"""conversation.threads: newest first, windows, agents, and blank excerpts for high turns."""

from datetime import timedelta

from freezegun import freeze_time

from models.base import utcnow
from ops.caller import OPERATOR
from ops.registry import call
from tests.integration.conftest import append, enable_logging

SECRET = "password=Tr0ub4dor&3xyz"


def threads(**body) -> list[dict]:
    return call("conversation.threads", OPERATOR, {"namespace": "th", **body})["threads"]


def test_threads_are_listed_newest_first_with_their_last_turn():
    enable_logging("th")
    with freeze_time(utcnow() - timedelta(days=10)):
        append("th", "old", "an old thread")
    append("th", "new", "first words")
    append("th", "new", "latest words", role="assistant")
    listed = threads()
    assert [t["thread_id"] for t in listed][:2] == ["new", "old"]
    assert listed[0]["last_turn"]["excerpt"] == "latest words" and listed[0]["turn_count"] == 2
    assert [t["thread_id"] for t in threads(window_days=7)] == ["new"]
    assert [t["thread_id"] for t in threads(offset=1, limit=1)] == ["old"]


def test_threads_filter_by_agent_and_star_lists_every_agent():
    append("th", "by-claude", "from claude", agent="claude")
    assert "by-claude" not in [t["thread_id"] for t in threads()]
    assert [t["thread_id"] for t in threads(agent="claude")] == ["by-claude"]
    assert "by-claude" in [t["thread_id"] for t in threads(agent="*")]


def test_a_last_turn_that_reads_as_high_is_listed_with_an_empty_excerpt():
    append("th", "leaky", SECRET)
    append("th", "leaky-late", "x" * 1000 + " " + SECRET)  # past the 240 shown, within 1,024 more
    append("th", "leaky-far", "y" * 1400 + " " + SECRET)  # beyond what is checked: shown as usual
    by_id = {t["thread_id"]: t for t in threads(limit=50)}
    assert by_id["leaky"]["last_turn"]["excerpt"] == ""
    assert by_id["leaky-late"]["last_turn"]["excerpt"] == ""
    assert by_id["leaky-far"]["last_turn"]["excerpt"] == "y" * 240


def test_a_title_that_reads_as_high_is_listed_as_empty():
    call("conversation.create", OPERATOR, {"namespace": "th", "thread_id": "titled", "title": SECRET})
    by_id = {t["thread_id"]: t for t in threads(limit=50)}
    assert by_id["titled"]["title"] is None and by_id["titled"]["last_turn"] is None


def test_get_and_list_still_serve_a_high_turn_in_its_thread():
    messages = call("conversation.list", OPERATOR, {"namespace": "th", "thread_id": "leaky"})["messages"]
    assert [m["content"] for m in messages] == [SECRET]
