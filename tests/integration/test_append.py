"""conversation.append: the recording switch, idempotency, the outbox write, screening."""

import threading

from sqlalchemy import text
from sqlmodel import func, select

from models import db
from models.conversation import Embedding, Thread, Turn
from models.stage_run import PENDING, StageRun
from tests.support.calls import append, enable_logging
from tests.support.rows import embedding_subject


def count(model) -> int:
    with db.session() as s:
        return s.exec(select(func.count()).select_from(model)).one()


def test_a_namespace_with_no_row_records_nothing():
    before = count(Turn), count(Thread), count(StageRun)  # other tests' rows, in whatever order
    answer = append("never-switched", "t", "hello there")
    assert answer["stored"] is False and answer["reason"] == "logging_disabled"
    assert (count(Turn), count(Thread), count(StageRun)) == before


def test_a_namespace_switched_off_records_nothing():
    enable_logging("off-again")
    enable_logging("off-again", False)
    answer = append("off-again", "t", "hello there")
    assert (answer["stored"], answer["reason"]) == (False, "logging_disabled")
    with db.session() as s:
        assert not s.exec(select(Turn).where(Turn.namespace == "off-again")).first()


def test_the_first_append_creates_the_thread_and_writes_turn_embedding_row_and_run_together():
    enable_logging("ns")
    answer = append(
        "ns",
        "thread-1",
        "We moved invoices to the new ledger.",
        msg_id="m1",
        run_id="r1",
        user_id="u1",
        reasoning="because",
        metadata={"k": "v"},
        tokens=12,
    )
    assert answer["stored"] is True and answer["embedding"] == "pending"
    with db.session() as s:
        thread = s.exec(select(Thread).where(Thread.thread_id == "thread-1")).one()
        turn = s.get(Turn, answer["turn_id"])
        row = s.exec(select(Embedding).where(Embedding.turn_id == turn.id)).one()
        run = s.exec(select(StageRun).where(StageRun.subject == embedding_subject(turn.id))).one()
    assert thread.turn_count == 1 and thread.agent == "default"
    assert (turn.reasoning, turn.user_id, turn.run_id, turn.meta, turn.tokens) == (
        "because",
        "u1",
        "r1",
        {"k": "v"},
        12,
    )
    assert row.text == turn.content and row.vector is None
    assert run.status == PENDING and run.stage == "embedding" and run.subject == f"embedding:{row.id}"
    assert run.idem_key == f"embedding:{row.id}:{row.digest[:16]}"


def test_an_append_is_idempotent_on_thread_and_msg_id():
    enable_logging("dup")
    first = append("dup", "t", "one", msg_id="same")
    second = append("dup", "t", "a different text", msg_id="same")
    assert first["stored"] and (second["stored"], second["reason"]) == (False, "duplicate")
    with db.session() as s:
        assert s.exec(select(func.count()).where(Turn.namespace == "dup")).one() == 1
        assert s.exec(select(Thread.turn_count).where(Thread.namespace == "dup")).one() == 1


def test_without_msg_id_relogging_the_same_turn_does_not_double_the_transcript():
    enable_logging("derive")
    first = append("derive", "t", "same words")
    again = append("derive", "t", "same words")
    other_role = append("derive", "t", "same words", role="assistant")
    assert first["msg_id"] == again["msg_id"] and again["reason"] == "duplicate"
    assert other_role["stored"] and other_role["msg_id"] != first["msg_id"]


def test_a_turn_that_reads_as_high_is_stored_but_gets_no_embedding_row_nor_run():
    enable_logging("secret")
    runs_before = count(StageRun)
    answer = append("secret", "t", "here is my key sk-proj-AbCdEf1234567890GhIjKlMnOpQrStUvWxYz12")
    assert answer["stored"] and answer["sensitivity"] == "high" and answer["embedding"] == "not_embedded"
    with db.session() as s:
        turn = s.get(Turn, answer["turn_id"])
        assert turn.content.endswith("Yz12")  # stored as written
        assert not s.exec(select(Embedding).where(Embedding.turn_id == turn.id)).first()
    assert count(StageRun) == runs_before


def test_system_and_tool_turns_stay_unindexed():
    enable_logging("roles")
    for role in ("system", "tool"):
        answer = append("roles", "t", f"a {role} turn", role=role)
        assert answer["stored"] and answer["embedding"] == "not_embedded"
    with db.session() as s:
        assert not s.exec(select(Embedding).where(Embedding.namespace == "roles")).first()


def test_only_the_first_2048_characters_are_kept_for_embedding():
    enable_logging("long")
    answer = append("long", "t", "x" * 2000 + "y" * 1000)
    with db.session() as s:
        row = s.exec(select(Embedding).where(Embedding.turn_id == answer["turn_id"])).one()
    assert len(row.text) == 2048 and row.text.endswith("y" * 48)


def test_appends_go_on_after_the_database_dropped_the_pooled_connections():
    """The append writes on a pooled connection of its own: one the server closed is replaced,
    not used (or handed to the next caller) broken."""
    enable_logging("reconnect")
    assert append("reconnect", "t", "before the server dropped us")["stored"]
    with db.session() as s:
        s.exec(
            text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        )
    assert append("reconnect", "t", "after the server dropped us")["stored"]
    with db.autocommit() as conn:
        assert conn.autocommit and not conn.broken
    assert conn.autocommit is False  # back in the pool transactional, for the sessions sharing it
    with db.session() as s:
        turns = s.exec(select(func.count()).select_from(Turn).where(Turn.namespace == "reconnect")).one()
    assert turns == 2


def test_a_turn_keeps_the_time_it_was_said_and_a_time_in_the_future_is_refused(client, make_token):
    from datetime import UTC, datetime, timedelta

    enable_logging("said")
    headers = make_token("said")
    then = datetime(2024, 3, 1, 9, 30, tzinfo=UTC)
    body = {"namespace": "said", "thread_id": "t", "role": "user"}
    late = client.post("/v1/conversation.append", json={**body, "content": "said later"}, headers=headers)
    early = client.post(
        "/v1/conversation.append",
        json={**body, "content": "said first", "ts": "2024-03-01T10:30:00+01:00"},
        headers=headers,
    )
    assert late.status_code == early.status_code == 200
    with db.session() as s:
        assert s.get(Turn, early.json()["turn_id"]).ts == then
        thread = s.exec(select(Thread).where(Thread.namespace == "said")).one()
        assert thread.last_turn_at == s.get(Turn, late.json()["turn_id"]).ts  # never moved back
    listed = client.post(
        "/v1/conversation.list", json={"namespace": "said", "thread_id": "t"}, headers=headers
    )
    assert [m["content"] for m in listed.json()["messages"]] == ["said first", "said later"]
    future = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    for ts, says in (
        (future, "future"),
        ("2024-03-01T10:30:00", "timezone"),
        ("1969-12-31T23:00:00Z", "1970"),
    ):
        refused = client.post(
            "/v1/conversation.append", json={**body, "content": f"at {ts}", "ts": ts}, headers=headers
        )
        assert refused.status_code == 422 and refused.json()["field"] == "ts", (ts, refused.text)
        assert says in refused.json()["error"], refused.json()
    with db.session() as s:
        assert not s.exec(select(Turn).where(Turn.namespace == "said", Turn.content.like("at %"))).first()


def test_each_turn_a_thread_gains_takes_the_next_sequence_number_whoever_writes_it():
    enable_logging("ns")
    thread = "sequenced"
    append("ns", thread, "first", msg_id="a", agent="planner")
    append("ns", thread, "first", msg_id="a", agent="coder")  # the coder's copy is a turn of its own
    append("ns", thread, "first", msg_id="a", agent="planner")  # a duplicate takes no number
    threads = [
        threading.Thread(target=append, args=("ns", thread, f"turn {i}"), kwargs={"msg_id": f"c{i}"})
        for i in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with db.session() as s:
        seqs = s.exec(select(Turn.seq).where(Turn.thread_id == thread).order_by(Turn.id)).all()
        last = s.exec(select(Thread.last_seq).where(Thread.thread_id == thread)).one()
    assert sorted(seqs) == list(range(1, 11)) and last == 10


def test_a_turn_said_long_ago_gets_a_run_timed_by_the_server():
    """A turn handed over with its original time (an ingested transcript, a hook): its embedding run
    is created, updated and available now, so it is not "oldest pending" by the transcript's age,
    is listed by `loom runs list --since`, and waits the sweep's grace like any other."""
    from datetime import UTC, datetime, timedelta

    from models.base import utcnow
    from workers import ledger

    enable_logging("old-times")
    before = utcnow()
    turn = append("old-times", "t", "said three years ago", ts="2023-11-01T08:00:00Z")
    with db.session() as s:
        assert s.get(Turn, turn["turn_id"]).ts == datetime(2023, 11, 1, 8, tzinfo=UTC)
        run = s.exec(select(StageRun).where(StageRun.subject == embedding_subject(turn["turn_id"]))).one()
    after = utcnow()
    for moment in (run.created_at, run.updated_at, run.available_at):
        assert before - timedelta(seconds=1) <= moment <= after, moment
    assert run.id in [r.id for r in ledger.select_runs(since=before - timedelta(seconds=1), limit=1000)]
