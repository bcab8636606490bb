"""conversation.delete: tombstones a thread's turns, thread row and embedding rows (filtered from
every read), passes a row another agent's live copy shares to that copy, settles rows earlier
builds left, and an append racing a delete never leaves a live turn in a deleted thread."""

import threading

import pytest
from sqlalchemy import text
from sqlmodel import select

from models import db
from models.conversation import Embedding, Thread, Turn
from ops.caller import OPERATOR
from ops.errors import OpError
from ops.registry import call
from tests.support.calls import append, enable_logging
from tests.support.waits import settled, wait_until

NS = "deleting"


def setup_module():
    enable_logging(NS)


def delete(thread: str, confirm: str | None = None, **extra) -> dict:
    body = {"namespace": NS, "thread_id": thread, "confirm_thread_id": confirm or thread, **extra}
    return call("conversation.delete", OPERATOR, body)


def embedding_rows(thread: str) -> list[Embedding]:
    with db.session() as s:
        return list(s.exec(select(Embedding).where(Embedding.namespace == NS, Embedding.thread_id == thread)))


def test_a_confirm_thread_id_that_differs_is_refused_and_deletes_nothing():
    append(NS, "keep", "a turn to keep")
    with pytest.raises(OpError) as refused:
        delete("keep", confirm="kepp")
    assert refused.value.status == 422 and refused.value.field == "confirm_thread_id"
    assert call("conversation.get", OPERATOR, {"namespace": NS, "thread_id": "keep"})["turn_count"] == 1


def test_only_an_admin_deletes(client, make_token):
    append(NS, "guarded", "a turn")
    body = {"namespace": NS, "thread_id": "guarded", "confirm_thread_id": "guarded"}
    answer = client.post("/v1/conversation.delete", json=body, headers=make_token(NS, role="writer"))
    assert answer.status_code == 403
    assert client.post("/v1/conversation.delete", json=body, headers=make_token(NS)).json()["thread_deleted"]


def test_a_deleted_thread_is_gone_from_every_read_and_takes_no_more_turns(worker):
    for i in range(4):
        append(NS, "gone", f"the quarterly budget spreadsheet revision {i}")
    wait_until(settled, what="the embeddings")
    answer = delete("gone")
    assert (answer["turns_deleted"], answer["thread_deleted"]) == (4, True)
    again = delete("gone")  # a client retrying a delete whose answer it lost
    assert (again["turns_deleted"], again["thread_deleted"]) == (0, True)
    with pytest.raises(OpError) as missing:
        call("conversation.get", OPERATOR, {"namespace": NS, "thread_id": "gone"})
    assert missing.value.status == 404
    listed = call("conversation.threads", OPERATOR, {"namespace": NS, "limit": 200})["threads"]
    assert "gone" not in [t["thread_id"] for t in listed]
    hits = call("conversation.search", OPERATOR, {"namespace": NS, "query": "quarterly budget spreadsheet"})[
        "hits"
    ]
    assert not [h for h in hits if h["thread_id"] == "gone"]
    assert all(row.deleted_at is not None for row in embedding_rows("gone"))
    late = append(NS, "gone", "a turn after the delete")
    assert (late["stored"], late["reason"]) == (False, "deleted")
    created = call("conversation.create", OPERATOR, {"namespace": NS, "thread_id": "gone"})
    assert (created["stored"], created["reason"]) == (False, "deleted")
    with db.session() as s:
        assert (
            s.exec(
                text("SELECT count(*) FROM turns WHERE thread_id = 'gone' AND deleted_at IS NULL")
            ).scalar()
            == 0
        )


def test_deleting_one_agents_copies_passes_the_shared_row_to_the_other_agent(worker):
    same = "the staging cluster moved to the eu-west region"
    first = append(NS, "pair", same, msg_id="m1", agent="planner")
    append(NS, "pair", same, msg_id="m1", agent="coder")
    append(NS, "pair", "the planner's own note", msg_id="m2", agent="planner")
    wait_until(settled, what="the embeddings")
    answer = delete("pair", agent="planner")
    assert (answer["turns_deleted"], answer["thread_deleted"]) == (2, False)
    rows = {row.msg_id: row for row in embedding_rows("pair")}
    assert (
        rows["m1"].deleted_at is None
        and rows["m1"].agent == "coder"
        and rows["m1"].turn_id != first["turn_id"]
    )
    assert rows["m2"].deleted_at is not None
    kept = call("conversation.list", OPERATOR, {"namespace": NS, "thread_id": "pair"})["messages"]
    assert [(m["msg_id"], m["agent"]) for m in kept] == [("m1", "coder")]
    body = {"namespace": NS, "query": "staging cluster eu-west region", "thread_id": "pair"}
    assert [
        h["msg_id"] for h in call("conversation.search", OPERATOR, {**body, "agent": "coder"})["hits"]
    ] == ["m1"]
    assert call("conversation.search", OPERATOR, {**body, "agent": "planner"})["hits"] == []

    def listed(agent: str) -> list[str]:
        threads = call("conversation.threads", OPERATOR, {"namespace": NS, "agent": agent, "limit": 200})[
            "threads"
        ]
        return [t["thread_id"] for t in threads]

    assert "pair" in listed("coder") and "pair" not in listed("planner")


def test_a_delete_settles_rows_whose_own_copy_an_earlier_build_removed(worker):
    shared = "the release train leaves on thursdays"
    own = append(NS, "legacy", shared, msg_id="m1", agent="old")
    append(NS, "legacy", shared, msg_id="m1", agent="new")
    lone = append(NS, "legacy", "a message only the old agent logged", msg_id="m2", agent="old")
    long_text = "x" * 300
    legacy = append(NS, "legacy", long_text, msg_id="m3", agent="old")
    append(NS, "legacy", long_text, msg_id="m3", agent="new")
    append(NS, "legacy", "a third agent's turn", msg_id="m4", agent="third")
    wait_until(settled, what="the embeddings")
    with db.session() as s:  # what an earlier build left: turns tombstoned, their rows not settled
        s.exec(
            text("UPDATE turns SET deleted_at = now() WHERE id = ANY(:ids)"),
            params={"ids": [own["turn_id"], lone["turn_id"], legacy["turn_id"]]},
        )
        s.exec(  # and a row cut at 240 characters, as those builds cut them
            text("UPDATE embeddings SET text = left(text, 240) WHERE turn_id = :id"),
            params={"id": legacy["turn_id"]},
        )
    delete("legacy", agent="third")
    rows = {row.msg_id: row for row in embedding_rows("legacy")}
    assert rows["m1"].deleted_at is None and rows["m1"].agent == "new"
    assert rows["m2"].deleted_at is not None
    assert rows["m3"].deleted_at is None and rows["m3"].agent == "new"  # matched on the turns' text


def test_a_240_character_row_passes_only_to_a_copy_whose_text_matches_its_own_turn(worker):
    head = "z" * 240
    own = append(NS, "cut", head + " and the old agent's ending", msg_id="m1", agent="old")
    append(NS, "cut", head + " but another ending", msg_id="m1", agent="new")  # its own row: other text
    append(NS, "cut", "a third agent's turn", msg_id="m2", agent="third")
    wait_until(settled, what="the embeddings")
    with db.session() as s:
        s.exec(
            text("UPDATE embeddings SET text = left(text, 240) WHERE turn_id = :id"),
            params={"id": own["turn_id"]},
        )
        s.exec(text("UPDATE turns SET deleted_at = now() WHERE id = :id"), params={"id": own["turn_id"]})
    delete("cut", agent="third")
    with db.session() as s:
        row = s.exec(select(Embedding).where(Embedding.text == head)).one()
    assert row.deleted_at is not None and row.agent == "old"


def test_an_append_racing_a_delete_leaves_no_live_turn_in_the_deleted_thread():
    append(NS, "race", "the first turn")
    answers: dict[str, dict] = {}
    with db.session() as s:
        s.exec(text("SELECT 1 FROM threads WHERE thread_id = 'race' FOR UPDATE"))  # both wait on this
        deleting = threading.Thread(target=lambda: answers.update(delete=delete("race")))
        deleting.start()
        wait_until(lambda: waiting() >= 1, what="the delete to wait")
        appending = threading.Thread(
            target=lambda: answers.update(append=append(NS, "race", "a racing turn"))
        )
        appending.start()
        wait_until(lambda: waiting() >= 2, what="the append to wait")
    deleting.join(30)
    appending.join(30)
    assert answers["delete"]["thread_deleted"] and answers["append"]["reason"] == "deleted"
    with db.session() as s:
        assert (
            s.exec(
                text("SELECT count(*) FROM turns WHERE thread_id = 'race' AND deleted_at IS NULL")
            ).scalar()
            == 0
        )
        assert s.exec(select(Thread.deleted_at).where(Thread.thread_id == "race")).one() is not None
        assert (
            s.exec(select(Turn).where(Turn.thread_id == "race", Turn.content == "a racing turn")).first()
            is None
        )


def waiting() -> int:
    with db.session() as s:
        return s.exec(text("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")).scalar()


def test_a_legacy_row_whose_heir_has_a_row_of_its_own_is_tombstoned_not_passed(worker):
    text_ = "w" * 300
    old = append(NS, "heir-has-row", text_, msg_id="m1", agent="old")
    wait_until(settled, what="the embedding")
    with db.session() as s:  # an earlier build's row: cut at 240 characters, digest of the cut
        s.exec(
            text("UPDATE embeddings SET text = left(text, 240), digest = 'legacy' WHERE turn_id = :id"),
            params={"id": old["turn_id"]},
        )
    new = append(NS, "heir-has-row", text_, msg_id="m1", agent="new")
    assert new["embedding"] == "pending"  # other digest: a row of its own
    wait_until(settled, what="the embedding")
    delete("heir-has-row", agent="old")
    rows = {row.digest: row for row in embedding_rows("heir-has-row")}
    assert rows["legacy"].deleted_at is not None
    [own] = [row for digest, row in rows.items() if digest != "legacy"]
    assert own.deleted_at is None and own.turn_id == new["turn_id"]


def test_two_deletes_at_once_are_both_answered_as_done():
    append(NS, "twice", "a turn deleted by two callers at once")
    answers: list[dict] = []
    with db.session() as s:
        s.exec(text("SELECT 1 FROM threads WHERE thread_id = 'twice' FOR UPDATE"))  # both wait on this
        callers = [threading.Thread(target=lambda: answers.append(delete("twice"))) for _ in range(2)]
        for caller in callers:
            caller.start()
        wait_until(lambda: waiting() >= 2, what="both deletes to wait")
    for caller in callers:
        caller.join(30)
    assert sorted(a["turns_deleted"] for a in answers) == [0, 1]
    assert all(a["thread_deleted"] for a in answers)
