"""Re-screening after an upgrade of the screening rules: turns judged by an older rule set are
judged again by the screening stage, in bounded runs. A turn that now reads as high loses its
embedding row and stops being served by search, listings and titles; one that no longer reads as
high is embedded and found. The scope of a namespace is kept, and a second pass does nothing."""

import pytest
from sqlmodel import func, select
from typer.testing import CliRunner

import cli
from models import db
from models.conversation import Embedding, Turn
from models.settings import get_settings
from ops.caller import OPERATOR
from ops.registry import call
from pipelines import screening
from schedules.rescreen import rescreen_outdated
from schedules.titler import title_untitled
from tests.integration.conftest import (
    append,
    context_of,
    enable_logging,
    found_lexically,
    lexemes_of,
    settled,
    wait_until,
)

NS, OTHER = "rescreen", "rescreen-other"
SECRET = "the card on file is 4111 1111 1111 1111, use it for the staging checkout"
FLAGGED = "ticket RESCREEN-4242 tracks the flaky checkout test"  # the old rules' false positive
PLAIN = [
    "the staging checkout fails on the third step",
    "it times out waiting for the payment provider",
    "raise the provider timeout to ten seconds",
]


def old_rules(text: str) -> screening.Screen:
    """The rule set of an older build: blind to card numbers, and over-eager on one ticket id."""
    if "RESCREEN-4242" in text:
        return screening.Screen(screening.HIGH, ("ticket",))
    found = NEW_RULES(text)
    shapes = tuple(shape for shape in found.shapes if shape != "card_number")
    return screening.Screen(screening.HIGH if shapes else screening.NONE, shapes)


NEW_RULES = screening.screen


@pytest.fixture
def upgrade(monkeypatch):
    """Write with the older rules (version RULES_VERSION), then upgrade (version + 1) on call."""
    version = screening.RULES_VERSION
    monkeypatch.setattr(screening, "screen", old_rules)

    def to_new_rules() -> None:
        monkeypatch.setattr(screening, "screen", NEW_RULES)
        monkeypatch.setattr(screening, "RULES_VERSION", version + 1)

    return to_new_rules


def setup_module():
    enable_logging(NS)
    enable_logging(OTHER)


def search(query: str, thread: str) -> list[str]:
    body = {"namespace": NS, "query": query, "thread_id": thread, "limit": 10}
    return [hit["msg_id"] for hit in call("conversation.search", OPERATOR, body)["hits"]]


def listed_excerpt(thread: str) -> str:
    listing = call("conversation.threads", OPERATOR, {"namespace": NS, "limit": 100})
    (item,) = [t for t in listing["threads"] if t["thread_id"] == thread]
    return item["last_turn"]["excerpt"]


def turn(namespace: str, content: str) -> Turn:
    with db.session() as s:
        return s.exec(select(Turn).where(Turn.namespace == namespace, Turn.content == content)).one()


def rows_of(turn_id: int) -> int:
    with db.session() as s:
        return s.exec(select(func.count()).where(Embedding.turn_id == turn_id)).one()


def test_an_upgrade_applies_the_new_rules_to_the_turns_already_held(upgrade, worker, llm):
    secret = SECRET
    for content in [*PLAIN, FLAGGED, secret]:
        append(NS, "checkout", content)
    append(OTHER, "checkout", secret)
    wait_until(settled, what="the embeddings")
    assert turn(NS, secret).sensitivity == "none" and rows_of(turn(NS, secret).id) == 1
    assert turn(NS, FLAGGED).sensitivity == "high" and rows_of(turn(NS, FLAGGED).id) == 0
    assert listed_excerpt("checkout") != ""  # the old rules showed it

    upgrade()
    done = CliRunner().invoke(cli.app, ["screening", "rescreen", "--namespace", NS, "--wait"])
    assert done.exit_code == 0, done.output
    assert "rescreen: sent 1 runs" in done.output and "1 succeeded" in done.output
    wait_until(settled, what="the new embedding run")

    now_high, cleared = turn(NS, secret), turn(NS, FLAGGED)
    assert (now_high.sensitivity, now_high.screened_with) == ("high", screening.RULES_VERSION)
    assert rows_of(now_high.id) == 0  # its vector is deleted, not kept
    assert now_high.msg_id not in search("card on file for the staging checkout", "checkout")
    assert listed_excerpt("checkout") == ""
    assert cleared.sensitivity == "none" and rows_of(cleared.id) == 1
    assert cleared.msg_id in search("ticket tracking the flaky checkout test", "checkout")
    # Another namespace's turn waits for its own pass (or one of every namespace).
    assert (
        turn(OTHER, secret).sensitivity == "none"
        and turn(OTHER, secret).screened_with < screening.RULES_VERSION
    )

    title_untitled()  # the titler reads the thread as the new rules judge it
    wait_until(settled, what="the title run")
    prompts = " ".join(m["content"] for messages in llm.chat_calls for m in messages)
    assert "staging checkout fails" in prompts and "4111" not in prompts

    assert rescreen_outdated(NS) == []  # nothing older is left there
    assert len(rescreen_outdated()) == 1  # the other namespace's turn
    wait_until(settled, what="the rescreen of every namespace")
    assert turn(OTHER, secret).sensitivity == "high" and rows_of(turn(OTHER, secret).id) == 0


def test_runs_are_bounded_ranges_and_the_pass_asks_for_the_rest_later(upgrade, worker, monkeypatch):
    monkeypatch.setenv("LOOM_RESCREEN_BATCH", "2")
    monkeypatch.setenv("LOOM_RESCREEN_MAX_RUNS", "2")
    get_settings.cache_clear()
    try:
        for i in range(9):
            append(NS, "many", f"{PLAIN[i % 3]} ({i})")
        wait_until(settled, what="the embeddings")
        upgrade()
        first = rescreen_outdated(NS)
        assert len(first) == 2  # two ranges of two turn ids each, no more
        wait_until(settled, what="the first runs")
        while rescreen_outdated(NS):
            wait_until(settled, what="the next runs")
    finally:
        get_settings.cache_clear()
    with db.session() as s:
        versions = s.exec(select(Turn.screened_with).where(Turn.namespace == NS, Turn.thread_id == "many"))
        assert set(versions) == {screening.RULES_VERSION}


def test_the_scheduler_looks_for_older_turns_as_soon_as_it_starts(upgrade, worker):
    from apscheduler.schedulers.background import BackgroundScheduler

    from schedules.runner import schedule

    words = "the scheduler came up after the upgrade"
    append(NS, "at-start", words)
    wait_until(settled, what="the embedding")
    upgrade()
    scheduler = BackgroundScheduler(timezone="UTC")
    schedule(scheduler)
    scheduler.start()
    try:
        wait_until(
            lambda: turn(NS, words).screened_with == screening.RULES_VERSION, what="the first rescreen"
        )
    finally:
        scheduler.shutdown(wait=True)


def test_a_turn_judged_high_leaves_every_context_and_one_cleared_joins_them(upgrade, worker):
    """The turn after one now high held its words: rebuilt in the judging transaction from the
    turn before it; the turn after one no longer high takes its words."""
    namespace = "rescreen-contexts"
    enable_logging(namespace)
    said = [
        "Which desk did we book for the spa?",
        "use card 4111 1111 1111 1111 at the Blue Lagoon desk",  # high under the new rules
        "Done.",
        "ticket RESCREEN-4242 blocks the nightly build",  # high under the old rules only
        "Noted.",
    ]
    for i, content in enumerate(said):
        append(namespace, "spa", content, msg_id=f"s{i}")
    assert "s2" in found_lexically(namespace, "Blue Lagoon")
    assert context_of(namespace, "spa", "s4") == lexemes_of(said[2])  # the flagged turn is no one's context
    wait_until(settled, what="the embeddings")
    upgrade()
    assert rescreen_outdated(namespace)
    wait_until(settled, what="the rescreen")
    assert found_lexically(namespace, "Blue Lagoon") == []
    assert context_of(namespace, "spa", "s2") == lexemes_of(said[0])
    assert context_of(namespace, "spa", "s4") == lexemes_of(said[3])
    assert "s4" in found_lexically(namespace, "nightly build")
