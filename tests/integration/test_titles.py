"""The titler: a pass that only enqueues (recording namespaces, the activity window, enough turns,
a cap a pass), a stage that never sends a turn reading as high, the title_refused mark and what
clears it, and nothing at all without an LLM provider."""

import logging
from datetime import timedelta

import pytest
from freezegun import freeze_time
from sqlmodel import select

from models import db
from models.base import utcnow
from models.conversation import Thread
from models.settings import get_settings
from ops.caller import OPERATOR
from ops.registry import call
from schedules.titling import title_untitled
from tests.support.calls import append, enable_logging
from tests.support.waits import settled, wait_until

NS, QUIET = "titles", "titles-not-recording"
SECRET = "my card is 4111 1111 1111 1111 exp 12/29 cvc 123"


def setup_module():
    enable_logging(NS)


@pytest.fixture(autouse=True)
def only_this_tests_threads():
    """Threads earlier tests left get a title of their own, so each pass sees only the new ones."""
    yield
    with db.session() as s:
        for thread in s.exec(select(Thread).where(Thread.title.is_(None))):
            thread.title = "set by the test"
            s.add(thread)


def thread(thread_id: str, turns: list[str], namespace: str = NS) -> None:
    for i, content in enumerate(turns):
        append(namespace, thread_id, content, role="user" if i % 2 == 0 else "assistant")


def title_of(thread_id: str) -> tuple[str | None, dict]:
    with db.session() as s:
        row = s.exec(select(Thread).where(Thread.namespace == NS, Thread.thread_id == thread_id)).one()
        return row.title, row.meta


PLAIN = [
    "how do I rotate the staging database credentials",
    "use the vault cli to issue a new lease",
    "and the application picks it up automatically",
    "yes, the sidecar reloads it within a minute",
]


def test_without_a_provider_the_titler_does_nothing_and_says_so_once(caplog):
    from providers import llm

    thread("no-model", PLAIN)
    llm._noted.discard("the titler")  # as in a process where it has not fired yet
    with caplog.at_level(logging.INFO, logger="schedules.titling"):
        assert title_untitled() == [] and title_untitled() == []
    assert sum("LOOM_LLM_PROVIDER=fake" in r.getMessage() for r in caplog.records) == 1
    assert title_of("no-model")[0] is None


def test_the_titler_titles_untitled_active_threads_from_plain_turns(llm, worker):
    thread("plain", PLAIN)
    thread("short", PLAIN[:3])  # below LOOM_CONVERSATION_TITLER_MIN_TURNS
    enable_logging(QUIET)
    thread("quiet", PLAIN, namespace=QUIET)
    enable_logging(QUIET, False)  # recorded once, no longer: the titler leaves it alone
    call(
        "conversation.create",
        OPERATOR,
        {"namespace": NS, "thread_id": "named", "title": "Chosen by a person"},
    )
    thread("named", PLAIN)
    sent = title_untitled()
    assert len(sent) == 1
    wait_until(settled, what="the title run")
    assert title_of("plain")[0] == "user how rotate the staging"  # the local server: the first five words
    assert title_of("short")[0] is None and title_of("named")[0] == "Chosen by a person"
    assert title_untitled() == []  # titled: not asked again


def test_a_thread_idle_past_the_window_is_not_titled(llm, worker):
    with freeze_time(utcnow() - timedelta(hours=get_settings().conversation_titler_window_hours + 1)):
        thread("old", PLAIN)
    assert title_untitled() == []


def test_the_pass_enqueues_at_most_its_cap(llm, worker, monkeypatch):
    for i in range(4):
        thread(f"capped-{i}", PLAIN)
    monkeypatch.setenv("LOOM_CONVERSATION_TITLER_MAX_THREADS_PER_PASS", "3")
    get_settings.cache_clear()
    assert len(title_untitled()) == 3
    wait_until(settled, what="the title runs")
    assert len(title_untitled()) == 1
    wait_until(settled, what="the last title run")


def test_high_turns_are_never_sent_and_the_title_comes_from_the_plain_ones(llm, worker):
    thread("mixed", [SECRET, *PLAIN])
    title_untitled()
    wait_until(settled, what="the title run")
    assert title_of("mixed")[0]
    assert not any("4111" in m["content"] for messages in llm.chat_calls for m in messages)


def test_eight_high_turns_mark_the_thread_refused_until_new_metadata(llm, worker):
    thread("all-high", [f"{SECRET}, note {i}" for i in range(8)])
    thread("few-high", [f"{SECRET}, note {i}" for i in range(5)])
    title_untitled()
    wait_until(settled, what="the title runs")
    title, meta = title_of("all-high")
    assert title is None and meta.get("title_refused") is True
    assert title_of("few-high") == (None, {})  # waits, unmarked, for a plain turn
    assert llm.chat_calls == []
    assert title_untitled() == []  # neither is asked again as it stands
    call(
        "conversation.update",
        OPERATOR,
        {"namespace": NS, "thread_id": "all-high", "metadata": {"team": "ops"}},
    )
    assert title_of("all-high")[1] == {"team": "ops"}  # the mark replaced: the titler asks once more
    assert len(title_untitled()) == 1
    wait_until(settled, what="the title run")
    assert title_of("all-high") == (None, {"team": "ops", "title_refused": True})
    append(NS, "few-high", "a plain turn at last about the staging database")
    assert len(title_untitled()) == 1
    wait_until(settled, what="the title run")
    assert title_of("few-high")[0]


def test_a_title_that_reads_as_high_is_refused_and_marked(llm, worker):
    llm.reply = lambda request: {"title": "password=Tr0ub4dor&3xyz rotation"}
    thread("leaky-title", PLAIN)
    title_untitled()
    wait_until(settled, what="the title run")
    title, meta = title_of("leaky-title")
    assert title is None and meta.get("title_refused") is True
    assert title_untitled() == []
    # The mark replaced by the very metadata the thread had before it: asked once more all the same.
    call("conversation.update", OPERATOR, {"namespace": NS, "thread_id": "leaky-title", "metadata": {}})
    llm.reply = lambda request: {"title": "Rotating staging credentials"}
    assert len(title_untitled()) == 1
    wait_until(settled, what="the title run")
    assert title_of("leaky-title")[0] == "Rotating staging credentials"
