"""Re-screening after an upgrade of the screening rules: turns judged by an older rule set are
judged again by the screening stage, in bounded runs. A turn that now reads as high loses its
embedding row and stops being served by search, listings and titles; one that no longer reads as
high is embedded and found. The scope of a namespace is kept, and a second pass does nothing."""

import pytest
from sqlmodel import func, select
from typer.testing import CliRunner

import cli
from models import db
from models.base import utcnow
from models.conversation import Embedding, Turn
from models.settings import get_settings
from ops.caller import OPERATOR
from ops.registry import call
from pipelines import screening
from schedules.screening import rescreen_outdated
from schedules.titling import title_untitled
from tests.support.calls import append, enable_logging, found_lexically
from tests.support.rows import context_of, lexemes_of
from tests.support.waits import settled, wait_until

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


def test_what_was_made_of_a_turn_now_high_is_withdrawn_with_it(upgrade, worker):
    """A summary that replaced the turn, the evidence an extraction kept of it and the memory
    citing that evidence, and the title the titler made for its thread: made while older rules let
    the turn through, withdrawn from search and listings when the new rules judge it high. What was
    made of other turns, and a title its client set, stay."""
    from uuid import UUID, uuid4

    from models.conversation import Thread
    from models.memory import MemoryEvidence, MemoryThread
    from models.stage_run import SUCCEEDED, StageRun

    namespace = "rescreen-derived"
    enable_logging(namespace)
    for i, content in enumerate([*PLAIN, SECRET]):
        append(namespace, "made-of", content, msg_id=f"m{i}")
        append(namespace, "client-titled", content, msg_id=f"m{i}")
    # As the compaction stage writes a summary (shown here as what a model made of the secret).
    append(
        namespace,
        "made-of",
        "Summary: the staging checkout is paid with the card 4111 1111 1111 1111.",
        role="system",
        metadata={"compacted_from": ["m2", "m3"]},
        msg_id="summary-1",
    )
    append(
        namespace,
        "made-of",
        "Summary: the provider timeout.",
        role="system",
        metadata={"compacted_from": ["m1"]},
    )
    wait_until(settled, what="the embeddings")
    with db.session() as s:
        made_of, client_titled = (
            s.exec(select(Thread).where(Thread.namespace == namespace, Thread.thread_id == t)).one()
            for t in ("made-of", "client-titled")
        )
        made_of.title, client_titled.title = "Card 4111 for the staging checkout", "Checkout notes"
        s.add(StageRun(stage="title", subject=f"thread:{made_of.id}", idem_key=uuid4().hex, status=SUCCEEDED))
    # Memory an extraction made, citing its evidence (set here as the extraction stage writes it).
    made = {
        content: call("memory.set", OPERATOR, {"namespace": namespace, "content": content})["thread"]
        for content in ("pays staging with the card on file", "checkout fails", "unrelated")
    }
    with db.session() as s:
        evidence = [
            MemoryEvidence(
                loom_id=made["unrelated"]["loomId"],
                namespace=namespace,
                thread_id="made-of",
                msg_id=f"m{i}",
                agent="default",
                role="user",
                content=content,
                ts=utcnow(),
                sensitivity="none",
            )
            for i, content in ((3, SECRET), (0, PLAIN[0]))
        ]
        s.add_all(evidence)
        s.flush()
        for content, cited in zip(
            ("pays staging with the card on file", "checkout fails"), evidence, strict=True
        ):
            s.get(MemoryThread, UUID(made[content]["id"])).evidence_ids = [cited.id]
    upgrade()
    assert rescreen_outdated(namespace)
    wait_until(settled, what="the rescreen")

    with db.session() as s:
        summary = s.exec(select(Turn).where(Turn.namespace == namespace, Turn.msg_id == "summary-1")).one()
        assert summary.sensitivity == "high" and rows_of(summary.id) == 0
        other = s.exec(
            select(Turn).where(Turn.namespace == namespace, Turn.content.like("%provider timeout."))
        )
        assert other.one().sensitivity == "none"
        assert [
            e.sensitivity
            for e in s.exec(
                select(MemoryEvidence)
                .where(MemoryEvidence.namespace == namespace)
                .order_by(MemoryEvidence.msg_id)
            )
        ] == ["none", "high"]
        cut = {
            m.content: m.cut_at is not None
            for m in s.exec(select(MemoryThread).where(MemoryThread.namespace == namespace))
        }
        assert cut == {
            "pays staging with the card on file": True,
            "checkout fails": False,
            "unrelated": False,
        }
        titles = dict(
            s.exec(select(Thread.thread_id, Thread.title).where(Thread.namespace == namespace)).all()
        )
        assert titles == {"made-of": None, "client-titled": "Checkout notes"}
    body = {"namespace": namespace, "query": "staging checkout card", "limit": 20}
    hits = call("conversation.search", OPERATOR, body)["hits"]
    assert "summary-1" not in [h["msg_id"] for h in hits] and not [h for h in hits if "4111" in str(h)]
    memory = call("memory.search", OPERATOR, {"namespace": namespace, "query": "card on file", "limit": 20})
    assert "pays staging" not in str(memory)
    recalled = call("memory.recall", OPERATOR, {"namespace": namespace, "thread_id": "made-of", "limit": 50})
    assert "4111" not in str(recalled)
    listing = call("conversation.threads", OPERATOR, {"namespace": namespace, "limit": 10})
    assert "4111" not in str(listing)


# Shapes rules version 3 reads as high (issue 34 item 8) that version 2 stored as ordinary text.
V3_SECRETS = [
    "sshpass -p 'Xk29aPq7' ssh deploy@web1",
    "Cookie: sessionid=8f3kq9zlm2xp7rt4vb6nc1wdaa0tq8zy; theme=dark",
    "my TOTP secret is JBSWY3DPEHPK3PXP",
    "my card number is 4111 1111\n1111 1111",
    "mi contraseña es girasol",
    "MRN: 12345678",
    "the passphrase is river seven lantern moss",
    "metamask private key 4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
]


def test_turns_version_2_stored_as_ordinary_are_judged_high_by_version_3(worker, monkeypatch):
    """The real version bump: turns written by a version-2 build (which read none of these shapes,
    so stored and embedded them) are judged again by this build's rules once it runs: high now,
    their vectors deleted; an ordinary turn of the same thread stays embedded."""
    namespace = "rescreen-v3"
    enable_logging(namespace)
    assert screening.RULES_VERSION >= 3
    said = [*V3_SECRETS, PLAIN[0]]
    with monkeypatch.context() as version_2:
        version_2.setattr(screening, "screen", lambda text: screening.Screen(screening.NONE, ()))
        version_2.setattr(screening, "RULES_VERSION", 2)
        for i, content in enumerate(said):
            append(namespace, "v3", content, msg_id=f"v{i}")
        wait_until(settled, what="the embeddings")
    for content in said:
        stored = turn(namespace, content)
        assert (stored.sensitivity, stored.screened_with, rows_of(stored.id)) == ("none", 2, 1), content

    version = screening.RULES_VERSION
    assert rescreen_outdated(namespace)
    wait_until(settled, what="the rescreen")
    for content in V3_SECRETS:
        judged = turn(namespace, content)
        assert (judged.sensitivity, judged.screened_with, rows_of(judged.id)) == ("high", version, 0), content
    plain = turn(namespace, PLAIN[0])
    assert (plain.sensitivity, plain.screened_with, rows_of(plain.id)) == ("none", version, 1)
    assert rescreen_outdated(namespace) == []
