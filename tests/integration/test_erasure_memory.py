"""Erasure of the memory plane against the real database, broker, workers and the local LLM
server. By user: the evidence of the person's messages, every memory thread that cites it or names
them as a subject, the tapestry lines those threads gave and the proposals of the threads they spoke
in go, and sessions forget them as a subject; everyone else's memory stays. By namespace: looms,
memory threads, evidence, sessions and night weavings are removed, tombstoned or purged alike."""

import uuid
from uuid import UUID

import pytest
from sqlalchemy import text
from sqlmodel import col, func, select

from models import db
from models.memory import Loom, LoomSession, MemoryEvidence, MemoryThread, NightWeaving
from models.stage_run import SUCCEEDED
from ops.caller import OPERATOR
from ops.registry import call
from pipelines import reflecting
from schedules.night_weaving import weave_night
from tests.support.calls import append, enable_logging
from tests.support.waits import settled, wait_until
from workers import ledger
from workers.stages import erasure as stage

ALICE_SAID = "I moved to Porto last spring and I work at the harbour office."
BOB_SAID = "Our team standup moved to nine thirty on Tuesdays."
MESSAGES = [
    {"role": "user", "content": ALICE_SAID, "user_id": "alice", "msg_id": "m-1"},
    {"role": "assistant", "content": "Noted.", "msg_id": "m-2"},
    {"role": "user", "content": BOB_SAID, "user_id": "bob", "msg_id": "m-3"},
]
ALICE_FACT = "Alice lives in Porto and works at the harbour office"
BOB_FACT = "The team standup is at nine thirty on Tuesdays"
ABOUT_ALICE = "Prefers window seats on long trains"
OFFICE = "The office closes at six on Fridays"


def op(ns: str, op_name: str, **body) -> dict:
    return call(op_name, OPERATOR, {"namespace": ns, **body})


def facts(request: dict) -> dict:
    """Line numbers as the prompt gives them: Alice's message is line 1, Bob's line 3."""
    return {"facts": [{"content": ALICE_FACT, "lines": [1, 2]}, {"content": BOB_FACT, "lines": [3]}]}


def remembered(ns: str) -> list[str]:
    return sorted(t["content"] for t in op(ns, "memory.inspect")["threads"])


def rows(model, ns: str) -> int:
    with db.session() as s:
        return s.exec(select(func.count()).select_from(model).where(model.namespace == ns)).one()


def replies(request: dict) -> dict:
    """The extraction's facts; a reflection's prose, quoting what it drew on."""
    if request["messages"][0]["content"].startswith(reflecting.INSTRUCTIONS[:60]):
        return {"answer": f"{ALICE_FACT}."}
    return facts(request)


def reflections(ns: str) -> list[dict]:
    """The reflection runs of the namespace's looms: their question and prose."""
    query = text(
        "SELECT r.params, r.result FROM stage_runs r JOIN looms l ON l.id::text = r.params ->> 'loom_id' "
        "WHERE r.stage = 'reflection' AND l.namespace = :ns"
    )
    with db.session() as s:
        return [dict(row._mapping) for row in s.execute(query, {"ns": ns})]


def a_memory(ns: str, llm) -> None:
    """Alice and Bob speak in one thread; extraction, a memory about Alice, an unrelated one, a
    session that wove a tapestry of them, a reflection on Alice written by the model, and a
    Suggest loom's proposals from the same words."""
    enable_logging(ns)
    append(ns, "chat", ALICE_SAID, user_id="alice", msg_id="m-1")
    append(ns, "chat", BOB_SAID, user_id="bob", msg_id="m-3")
    llm.reply = replies
    run = op(ns, "memory.set_from_messages", thread_id="chat", messages=MESSAGES, defer=False)["run"]
    assert run["status"] == SUCCEEDED and run["result"]["memories"] == 2, run
    op(ns, "memory.set", content=ABOUT_ALICE, subjects=["alice"])
    op(ns, "memory.set", content=OFFICE, weight=0.9)
    wait_until(settled, what="the memories' embeddings")
    op(ns, "context.pack", thread_id="chat", agent="guide")
    reflected = op(ns, "memory.reflect", question="Where does Alice live?")
    assert reflected["by"] == "model" and ALICE_FACT in reflected["answer"], reflected
    loom = op(ns, "looms.create", name="proposing", weaving_mode="Suggest")["loom"]["id"]
    proposing = {"loom_id": loom, "thread_id": "chat", "agent": "guide"}
    assert op(ns, "memory.set_from_messages", messages=MESSAGES, defer=False, **proposing)["run"]["result"][
        "proposed"
    ]


def session_of(ns: str, **where) -> dict:
    (session,) = op(ns, "looms.sessions", agent_name="guide", **where)["sessions"]
    return session


@pytest.fixture
def ns(database) -> str:
    return f"erase-memory-{uuid.uuid4().hex[:8]}"


def test_erasure_by_user_takes_the_memory_of_their_words_and_of_them(ns, llm, worker):
    a_memory(ns, llm)
    before = session_of(ns)
    assert ALICE_FACT in before["tapestry"] and ABOUT_ALICE in before["tapestry"]
    assert "alice" in before["subjects"]
    assert [r["params"]["question"] for r in reflections(ns)] == ["Where does Alice live?"]

    run = call("erasure.request", OPERATOR, {"namespace": ns, "user_id": "alice", "wait": True})["run"]
    assert run["status"] == SUCCEEDED, run
    assert run["result"]["memory_threads"] == 2 and run["result"]["memory_evidence"] == 2, run

    assert remembered(ns) == sorted([BOB_FACT, OFFICE])
    for query in ("Porto harbour office", "window seats on trains"):
        found = {hit["content"] for hit in op(ns, "memory.search", query=query)["hits"]}
        assert not found & {ALICE_FACT, ABOUT_ALICE}, query
    assert not op(ns, "memory.recall", query="Porto")["hits"]
    assert [hit["msg_id"] for hit in op(ns, "memory.recall", query="standup")["hits"]] == ["m-3"]
    after = session_of(ns)
    # The tapestry keeps what others gave it and loses only the erased lines; it is not re-chosen.
    assert after["tapestry"].splitlines() == [
        line for line in before["tapestry"].splitlines() if ALICE_FACT not in line and ABOUT_ALICE not in line
    ]
    assert OFFICE in after["tapestry"] and "alice" not in after["subjects"]
    assert len(after["tapestryThreadIds"]) == len(before["tapestryThreadIds"]) - 2
    assert reflections(ns) == []  # the reflection that drew on her threads, its question and prose
    loom = next(lm["id"] for lm in op(ns, "looms.list")["looms"] if lm["name"] == "proposing")
    assert session_of(ns, loom_id=loom)["pendingProposals"] == []

    again = call("erasure.request", OPERATOR, {"namespace": ns, "user_id": "alice", "wait": True})["run"]
    assert again["status"] == SUCCEEDED and not again["result"], again  # nothing left of her


@pytest.mark.parametrize("purge", [False, True])
def test_erasure_of_a_namespace_removes_its_memory_plane_and_leaves_others(purge, llm, worker):
    gone, kept = (f"erase-ns-memory-{uuid.uuid4().hex[:8]}" for _ in range(2))
    for namespace in (gone, kept):
        a_memory(namespace, llm)
        for loom in op(namespace, "looms.list")["looms"]:
            weave_night(UUID(loom["id"]), "test")  # a night weaving record of each loom
    body = {"namespaces": [gone], "purge": purge, "wait": True}
    run = call("erasure.request", OPERATOR, body)["run"]
    assert run["status"] == SUCCEEDED, run
    for model in (LoomSession, MemoryThread, MemoryEvidence, Loom):
        assert rows(model, gone) == 0, model
        assert rows(model, kept) > 0, model
    with db.session() as s:
        weavings = s.exec(select(NightWeaving.loom_id).where(col(NightWeaving.loom_id).is_not(None))).all()
        looms = set(s.exec(select(Loom.id)).all())
    assert set(weavings) <= looms and len(set(weavings) & looms) >= 2  # the kept namespace's stay
    assert run["result"]["reflections"] == 1 and reflections(gone) == [] and len(reflections(kept)) == 1
    assert remembered(kept) == sorted([BOB_FACT, ABOUT_ALICE, OFFICE, ALICE_FACT])


def test_a_memory_erasure_that_fails_midway_is_finished_by_the_next_delivery(ns, loom_env, monkeypatch):
    about_carol = [f"Carol's note {i}: she reviews the {topic} docs" for i, topic in enumerate("abc")]
    for content in [*about_carol, OFFICE]:
        written = op(ns, "memory.set", content=content, subjects=["carol"] if "Carol" in content else [])
    office = written["thread"]["id"]
    woven = op(ns, "context.pack", thread_id="chat", agent="guide")["tapestry"]
    assert all(line in woven for line in about_carol)
    loom_env(LOOM_ERASURE_BATCH="1")
    run_id = call("erasure.request", OPERATOR, {"namespace": ns, "user_id": "carol"})["run"]["id"]
    real, batches = stage._one_batch, []

    def dies_after_one_thread(run, table, step, params):
        if batches.count("memory_threads") == 1:
            raise RuntimeError("the worker died")
        batches.append(table)
        return real(run, table, step, params)

    monkeypatch.setattr(stage, "_one_batch", dies_after_one_thread)
    stage.erase([run_id])
    midway = session_of(ns)
    # One thread gone with its line, in one transaction; the other two still there, and woven.
    assert len(remembered(ns)) == 3 and len(midway["tapestryThreadIds"]) == 3
    assert sum(line in midway["tapestry"] for line in about_carol) == 2
    monkeypatch.setattr(stage, "_one_batch", real)
    with db.session() as s:
        s.execute(text("UPDATE stage_runs SET available_at = now() WHERE id = :id"), {"id": run_id})
    stage.erase([run_id])
    run = ledger.get(run_id)
    assert run.status == SUCCEEDED and run.result == {"memory_threads": 3}, run.result
    assert remembered(ns) == [OFFICE] and session_of(ns)["tapestry"].splitlines()[1:] == [
        f"- {OFFICE} [{office}]"  # a line names its thread's id (issue 36)
    ]
