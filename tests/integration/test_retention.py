"""Retention and tiering of transcripts, on the monthly partitions of turns: a month wholly past
LOOM_RETENTION_CONVERSATIONS_DAYS is dropped, the month holding the cutoff trimmed in batches;
a second pass removes nothing more; embedding rows have no TTL and stay; a copy is still unique
across months; months older than LOOM_TIERING_CONVERSATIONS_WARM_DAYS move to the warm
tablespace and read the same. "Now" is set with freezegun (in 2003, below every other test's
turns), and the runs are delivered in this process as a worker thread would."""

import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from freezegun import freeze_time
from sqlalchemy import text
from sqlmodel import func, select

from models import db, partitions
from models.conversation import Embedding, Thread, Turn, TurnKey
from models.settings import get_settings
from models.stage_run import SUCCEEDED
from ops.caller import OPERATOR
from ops.registry import call
from schedules.retention import plan_partitions
from services import postgres
from tests.support.calls import append, enable_logging, found_lexically
from tests.support.rows import context_of
from workers import ledger
from workers.stages.retention import keep_partitions

NS = "retention"


def setup_module():
    enable_logging(NS)


def said(thread: str, day: str, n: int = 2) -> list[int]:
    return [
        append(NS, thread, f"{thread} turn {i} said on {day}", ts=f"{day}T12:00:00Z")["turn_id"]
        for i in range(n)
    ]


def deliver(run_ids: list[int]) -> None:
    for run_id in run_ids:
        keep_partitions([run_id])
        assert ledger.get(run_id).status == SUCCEEDED, ledger.get(run_id)


def months() -> set[str]:
    with db.autocommit() as conn:
        return {p.name for p in partitions.listing(conn)}


def count(model, *where) -> int:
    with db.session() as s:
        return s.exec(select(func.count()).select_from(model).where(*where)).one()


def turn_count(thread: str) -> int:
    with db.session() as s:
        return s.exec(
            select(Thread.turn_count).where(Thread.namespace == NS, Thread.thread_id == thread)
        ).one()


def test_the_cutoff_is_the_start_of_the_day_that_many_days_ago():
    with freeze_time("2003-06-15 18:30:00"):
        assert partitions.retention_cutoff(datetime.now(UTC), 30) == datetime(2003, 5, 16, tzinfo=UTC)


def test_expired_months_are_dropped_the_cutoffs_month_trimmed_and_twice_removes_nothing_more(loom_env):
    old = said("expiry", "2003-03-10", 3)  # a month wholly past the cutoff
    edge = said("expiry", "2003-05-10")  # the cutoff's month, before it
    kept = said("expiry", "2003-05-20") + said("expiry", "2003-06-01")
    rows_before = count(Embedding, Embedding.namespace == NS)
    assert "turns_p2003_03" in months() and turn_count("expiry") == 9

    loom_env(LOOM_RETENTION_CONVERSATIONS_DAYS="30")
    with freeze_time("2003-06-15 18:30:00"):  # the cutoff: 2003-05-16
        sent = plan_partitions()
    asked = {ledger.get(r).subject: ledger.get(r).idem_key for r in sent}  # (and older months of other tests)
    assert asked["month:200303"] == "retention:200303:drop"
    assert asked["month:200305"] == "retention:200305:trim-20030516"
    assert all(subject <= "month:200305" for subject in asked)
    deliver(sent)

    assert "turns_p2003_03" not in months()
    with db.session() as s:
        left = s.exec(select(Turn.id).where(Turn.namespace == NS, Turn.thread_id == "expiry")).all()
    assert sorted(left) == sorted(kept)
    assert count(TurnKey, TurnKey.turn_id.in_(old + edge)) == 0  # their keys went with them
    assert turn_count("expiry") == len(kept)
    assert count(Embedding, Embedding.namespace == NS) == rows_before  # embedding rows have no TTL
    listing = call(
        "conversation.get", OPERATOR, {"namespace": NS, "thread_id": "expiry", "include_messages": True}
    )
    assert len(listing["messages"]) == len(kept)

    with freeze_time("2003-06-15 19:30:00"):
        assert plan_partitions() == []  # nothing left to expire: no run, nothing removed
    assert count(Turn, Turn.namespace == NS, Turn.thread_id == "expiry") == len(kept)


def test_a_copy_is_a_duplicate_whatever_month_it_is_resent_with():
    first = append(NS, "resent", "the same message twice", msg_id="m-1", ts="2003-01-05T10:00:00Z")
    again = append(NS, "resent", "the same message twice", msg_id="m-1", ts="2003-02-07T10:00:00Z")
    assert first["stored"] and (again["stored"], again["reason"]) == (False, "duplicate")
    assert count(Turn, Turn.namespace == NS, Turn.thread_id == "resent") == 1


def test_a_drop_killed_after_its_detach_is_finished_by_the_next_delivery(loom_env):
    said("killed", "2002-11-03", 4)
    loom_env(LOOM_RETENTION_CONVERSATIONS_DAYS="30")
    with freeze_time("2003-01-20 00:00:00"):
        sent = plan_partitions()
    (drop,) = [r for r in sent if ledger.get(r).subject == "month:200211"]
    with psycopg.connect(get_settings().database_url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute("ALTER TABLE turns DETACH PARTITION turns_p2002_11")  # then the worker died
    deliver(sent)
    assert "turns_p2002_11" not in months() and turn_count("killed") == 0
    with db.session() as s:
        assert s.exec(text("SELECT to_regclass('turns_p2002_11')")).one()[0] is None
    assert ledger.get(drop).result == {"turns": 4, "keys": 4}


def test_a_write_of_a_month_without_a_partition_makes_it():
    assert "turns_p1999_12" not in months()
    assert append(NS, "imported", "said long ago", ts="1999-12-31T23:59:59Z")["stored"]
    assert "turns_p1999_12" in months()


@pytest.fixture(scope="module")
def warm_tablespace(admin_url):
    """A tablespace in a directory of the PostgreSQL server's user (cluster-wide: made once)."""
    name = "loom_warm_test"
    home = Path(os.environ["LOOM_HOME"]) / "postgres"
    owner = home.stat()
    # As an operator does: the superuser makes it, and grants Loom's role its use.
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if conn.execute("SELECT FROM pg_tablespace WHERE spcname = %s", (name,)).fetchone() is None:
            location = Path(tempfile.mkdtemp(prefix="loom-warm-"))
            os.chown(location, owner.st_uid, owner.st_gid)
            conn.execute(f"CREATE TABLESPACE {name} LOCATION '{location}'")
        conn.execute(f"GRANT CREATE ON TABLESPACE {name} TO {postgres.ROLE}")
    return name


def test_old_months_move_to_the_warm_tablespace_and_read_the_same(loom_env, warm_tablespace):
    said("tiered", "2001-07-04", 3)
    before = call(
        "conversation.get", OPERATOR, {"namespace": NS, "thread_id": "tiered", "include_messages": True}
    )
    loom_env(LOOM_TIERING_CONVERSATIONS_WARM_DAYS="90", LOOM_WARM_TABLESPACE=warm_tablespace)
    with freeze_time("2001-12-01 00:00:00"):
        sent = plan_partitions()
    deliver(sent)
    with db.autocommit() as conn:
        moved = {p.name: p.tablespace for p in partitions.listing(conn)}
        index_spaces = conn.execute(
            "SELECT DISTINCT t.spcname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "LEFT JOIN pg_tablespace t ON t.oid = c.reltablespace "
            "WHERE i.indrelid = 'turns_p2001_07'::regclass"
        ).fetchall()
    assert moved["turns_p2001_07"] == warm_tablespace and index_spaces == [(warm_tablespace,)]
    assert moved["turns_p2001_12"] is None  # younger than 90 days on 2001-12-01
    after = call(
        "conversation.get", OPERATOR, {"namespace": NS, "thread_id": "tiered", "include_messages": True}
    )
    assert after == before
    with freeze_time("2001-12-01 01:00:00"):
        assert plan_partitions() == []  # moved once


def test_an_expired_turns_embedding_row_stays_until_a_delete_of_its_thread_tombstones_it(loom_env):
    (turn_id,) = said("orphan", "2000-02-10", 1)
    loom_env(LOOM_RETENTION_CONVERSATIONS_DAYS="30")
    with freeze_time("2000-06-01 00:00:00"):
        deliver(plan_partitions())
    assert count(Turn, Turn.id == turn_id) == 0
    assert count(Embedding, Embedding.turn_id == turn_id, Embedding.deleted_at.is_(None)) == 1  # no TTL
    body = {"namespace": NS, "thread_id": "orphan", "confirm_thread_id": "orphan"}
    call("conversation.delete", OPERATOR, body)
    assert count(Embedding, Embedding.turn_id == turn_id, Embedding.deleted_at.is_not(None)) == 1


def test_a_turn_said_before_the_cutoff_is_not_stored_it_would_expire_at_once(loom_env):
    loom_env(LOOM_RETENTION_CONVERSATIONS_DAYS="30")
    late = append(NS, "late-resend", "a turn re-sent long after it expired", ts="2001-01-01T00:00:00Z")
    assert (late["stored"], late["reason"]) == (False, "expired")
    assert count(Turn, Turn.thread_id == "late-resend") == 0
    recent = append(NS, "late-resend", "a turn said today")
    assert recent["stored"]


def test_a_trim_killed_midway_is_finished_with_whole_counts(loom_env, monkeypatch):
    from workers.stages import retention

    said("trimmed", "2004-04-02", 5)
    loom_env(LOOM_RETENTION_CONVERSATIONS_DAYS="30", LOOM_RETENTION_BATCH="2")
    with freeze_time("2004-05-20 00:00:00"):  # the cutoff: 2004-04-20, inside April
        sent = plan_partitions()
    (trim,) = [r for r in sent if ledger.get(r).subject == "month:200404"]
    real, batches = retention._trim_batch, []

    def dies_after_one(*args):
        if batches:
            raise RuntimeError("the worker died")
        batches.append(1)
        return real(*args)

    monkeypatch.setattr(retention, "_trim_batch", dies_after_one)
    keep_partitions([trim])
    assert count(Turn, Turn.thread_id == "trimmed") == 3
    monkeypatch.setattr(retention, "_trim_batch", real)
    with db.session() as s:
        s.execute(text("UPDATE stage_runs SET available_at = now() WHERE id = :id"), {"id": trim})
    deliver([trim])
    assert count(Turn, Turn.thread_id == "trimmed") == 0 and ledger.get(trim).result == {"turns": 5}


def test_no_turn_is_found_by_an_expired_turns_words_in_its_context(loom_env, monkeypatch):
    """A turn after an expired one held its words as context: rebuilt by the trim's batch, and for
    a dropped month before its partition is detached (its turns leave every read there)."""
    from pipelines import retention

    said_at = {"f0": "2007-03-10", "f1": "2007-05-20", "g0": "2007-05-10", "g1": "2007-05-21"}
    texts = {
        "f0": "Which ferry crosses the Geirangerfjord?",
        "f1": "The one at noon.",
        "g0": "Who guides the Briksdal glacier walk?",
        "g1": "Ola does.",
    }
    for msg, thread in (("f0", "fjord"), ("f1", "fjord"), ("g0", "glacier"), ("g1", "glacier")):
        append(NS, thread, texts[msg], msg_id=msg, ts=f"{said_at[msg]}T12:00:00Z")
    assert "f1" in found_lexically(NS, "Geirangerfjord") and "g1" in found_lexically(NS, "Briksdal glacier")
    detached_with, real_detach = [], retention.detach

    def detach(month):
        detached_with.append((month.month, context_of(NS, "fjord", "f1")))
        return real_detach(month)

    monkeypatch.setattr(retention, "detach", detach)
    loom_env(LOOM_RETENTION_CONVERSATIONS_DAYS="30")
    with freeze_time("2007-06-15 18:30:00"):  # the cutoff: 2007-05-16
        deliver(plan_partitions())
        assert found_lexically(NS, "Geirangerfjord") == found_lexically(NS, "Briksdal glacier") == []
    assert (3, None) in detached_with  # March's words were out of every context before it left
    assert context_of(NS, "fjord", "f1") is None and context_of(NS, "glacier", "g1") is None
