"""Every writer that hides turns locks their threads' rows before the turns, as conversation.delete
and the append do: a writer that took a turn first and its thread second could deadlock with a
delete of that thread, each waiting on the other's row. Each test holds a thread's row, starts the
writer (re-screening, erasure of a person, a retention trim) and finds the thread's turns still
free while the writer waits; released, the writer finishes."""

import threading
from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import text

from models import db
from pipelines import erasure, retention, screening
from pipelines.screening import rescreening
from tests.support.calls import append, enable_logging
from tests.support.waits import wait_until

NS = "lock-order"
CARD = "the card on file is 4111 1111 1111 1111, use it for the staging checkout"


def setup_module():
    enable_logging(NS)


def waiting() -> int:
    with db.session() as s:
        return s.exec(text("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")).scalar()


def free_turns(thread_id: str) -> tuple[int, int]:
    """(the thread's turns no other transaction holds a lock on, all its turns)."""
    params = {"ns": NS, "thread": thread_id}
    with db.session() as s:
        free = s.exec(
            text(
                "SELECT count(*) FROM (SELECT 1 FROM turns WHERE namespace = :ns AND thread_id = :thread "
                "FOR UPDATE SKIP LOCKED) x"
            ),
            params=params,
        ).scalar()
        total = s.exec(
            text("SELECT count(*) FROM turns WHERE namespace = :ns AND thread_id = :thread"), params=params
        ).scalar()
        s.rollback()
    return free, total


def waits_for_the_thread_before_its_turns(thread_id: str, write: Callable[[], object]) -> None:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            write()
        except BaseException as error:  # the assertion below names it
            errors.append(error)

    writer = threading.Thread(target=run)
    with db.session() as holder:
        holder.exec(
            text("SELECT 1 FROM threads WHERE namespace = :ns AND thread_id = :thread FOR UPDATE"),
            params={"ns": NS, "thread": thread_id},
        )
        before = waiting()
        writer.start()
        wait_until(lambda: waiting() > before, what="the writer to wait on the thread's row")
        free, total = free_turns(thread_id)
        assert total > 0 and free == total, f"the writer holds {total - free} of {total} turns"
    writer.join(30)
    assert not writer.is_alive() and not errors, errors


def test_rescreening_locks_the_thread_before_its_turns():
    for i, content in enumerate(["the checkout is slow", CARD, "raise the timeout"]):
        append(NS, "rescreened", content, msg_id=f"m{i}")
    with db.session() as s:  # judged by an older build that missed the card number
        ids = (
            s.exec(
                text(
                    "UPDATE turns SET sensitivity = 'none', screened_with = :old "
                    "WHERE namespace = :ns AND thread_id = 'rescreened' RETURNING id"
                ),
                params={"ns": NS, "old": screening.RULES_VERSION - 1},
            )
            .scalars()
            .all()
        )
    span = range(min(ids), max(ids) + 1)

    def judge() -> None:
        with db.session() as s:
            judged = rescreening.judge_again(s, span, screening.RULES_VERSION, NS)
        assert judged.counts["high"] == 1

    waits_for_the_thread_before_its_turns("rescreened", judge)


def test_erasure_of_a_person_locks_the_thread_before_their_turns():
    for i in range(3):
        append(NS, "erased", f"a line of Ada's, number {i}", msg_id=f"m{i}", user_id="ada")

    def erase() -> None:
        params = {"namespace": NS, "user_id": "ada", "n": 100, "now": datetime.now(UTC)}
        with db.session() as s:
            assert erasure.one_batch(s, erasure.BY_USER["turns"], params) == 3

    waits_for_the_thread_before_its_turns("erased", erase)


def test_a_retention_trim_locks_the_thread_before_its_turns():
    for i in range(3):
        append(NS, "trimmed", f"an old line, number {i}", msg_id=f"m{i}", ts=f"2004-03-0{i + 1}T12:00:00Z")
    month = datetime(2004, 3, 1, tzinfo=UTC)

    def trim() -> None:
        with db.session() as s:
            assert retention.trim(s, month, datetime(2004, 3, 3, tzinfo=UTC), 100) == 2

    waits_for_the_thread_before_its_turns("trimmed", trim)
