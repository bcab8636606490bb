"""Copies per agent: each agent of a thread keeps its own copy of a message, idempotent per
(namespace, thread, agent, msg_id); copies with the same text share one embedding row; a named
agent scopes get, list and search to its copies; migration 0005 carries existing data over."""

from datetime import timedelta

from freezegun import freeze_time
from sqlalchemy import text
from sqlmodel import select

from models import db
from models.base import utcnow
from models.conversation import Embedding, Thread, Turn
from models.stage_run import StageRun
from models.stages import EMBEDDING
from ops.caller import OPERATOR
from ops.registry import call
from tests.support.calls import append, enable_logging
from tests.support.waits import settled, wait_until

NS = "copies"


def setup_module():
    enable_logging(NS)


def rows(model, *where) -> list:
    with db.session() as s:
        return list(s.exec(select(model).where(*where)))


def test_two_agents_keep_their_own_copies_and_share_one_embedding_row():
    first = append(NS, "shared", "the deploy runbook lives in the ops wiki", msg_id="m1", agent="planner")
    second = append(NS, "shared", "the deploy runbook lives in the ops wiki", msg_id="m1", agent="coder")
    again = append(NS, "shared", "the deploy runbook lives in the ops wiki", msg_id="m1", agent="coder")
    assert (first["embedding"], second["embedding"]) == ("pending", "shared")
    assert (again["stored"], again["reason"]) == (False, "duplicate")
    copies = rows(Turn, Turn.thread_id == "shared", Turn.msg_id == "m1")
    assert sorted(t.agent for t in copies) == ["coder", "planner"]
    [row] = rows(Embedding, Embedding.thread_id == "shared", Embedding.msg_id == "m1")
    assert row.turn_id == first["turn_id"]
    assert len(rows(StageRun, StageRun.subject == f"embedding:{row.id}")) == 1
    assert rows(Thread, Thread.thread_id == "shared")[0].turn_count == 2


def test_a_copy_with_other_text_gets_an_embedding_row_of_its_own():
    append(NS, "edited", "use the blue button", msg_id="m1", agent="planner")
    other = append(NS, "edited", "use the green button", msg_id="m1", agent="coder")
    assert other["embedding"] == "pending"
    assert len(rows(Embedding, Embedding.thread_id == "edited")) == 2


def test_a_named_agent_scopes_get_list_and_search_and_no_agent_keeps_every_copy(worker):
    append(NS, "scoped", "alpha planner notes about kubernetes autoscaling", msg_id="p1", agent="planner")
    append(NS, "scoped", "beta coder notes about postgres vacuum tuning", msg_id="c1", agent="coder")
    append(NS, "scoped", "both agents saw the shared incident timeline", msg_id="s1", agent="planner")
    append(NS, "scoped", "both agents saw the shared incident timeline", msg_id="s1", agent="coder")
    wait_until(settled, what="the embeddings")

    def msg_ids(op: str, **extra) -> list[str]:
        answer = call(op, OPERATOR, {"namespace": NS, "thread_id": "scoped", **extra})
        return sorted(m["msg_id"] for m in answer["messages"])

    assert msg_ids("conversation.list", agent="coder") == ["c1", "s1"]
    assert msg_ids("conversation.get", agent="planner", include_messages=True) == ["p1", "s1"]
    assert msg_ids("conversation.list") == ["c1", "p1", "s1", "s1"]
    assert msg_ids("conversation.list", agent="*") == ["c1", "p1", "s1", "s1"]

    def found(query: str, **extra) -> list[str]:
        answer = call(
            "conversation.search",
            OPERATOR,
            {
                "namespace": NS,
                "thread_id": "scoped",
                "query": query,
                "limit": 10,
                "search_mode": "semantic",
                **extra,
            },
        )
        return sorted(h["msg_id"] for h in answer["hits"])

    assert found("shared incident timeline") == ["s1"]  # one hit for both copies
    assert found("shared incident timeline", search_mode="hybrid").count("s1") == 1  # in every mode
    assert found("shared incident timeline", agent="coder") == ["s1"]  # its copy, through the shared row
    assert "p1" not in found("kubernetes autoscaling", agent="coder")
    assert "p1" in found("kubernetes autoscaling", agent="planner")


def test_last_turn_at_never_moves_back():
    append(NS, "clock", "the newest turn")
    newest = rows(Thread, Thread.thread_id == "clock")[0].last_turn_at
    with freeze_time(utcnow() - timedelta(hours=1)):  # a turn whose write carries an older time
        assert append(NS, "clock", "a turn stamped earlier")["stored"]
    [thread] = rows(Thread, Thread.thread_id == "clock")
    assert thread.last_turn_at == newest and thread.turn_count == 2


def test_turns_are_indexed_for_paging_by_thread_and_id():
    with db.session() as s:
        indexes = s.exec(text("SELECT indexdef FROM pg_indexes WHERE tablename = 'turns'")).scalars().all()
    assert any("(namespace, thread_id, id)" in index for index in indexes), indexes


def test_an_embedding_run_whose_row_is_gone_is_skipped(worker):
    with db.session() as s:
        run = StageRun(stage="embedding", subject="embedding:0", idem_key="embedding:0:gone")
        s.add(run)
        s.flush()
        run_id = run.id
    from workers import outbox

    outbox.send(EMBEDDING, [run_id])
    wait_until(settled, what="the run")
    [done] = rows(StageRun, StageRun.id == run_id)
    assert (done.status, done.reason) == ("skipped", "deleted")
