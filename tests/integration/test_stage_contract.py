"""The contract every registered stage keeps, one test per promise, parametrised over the stage
registry (a stage without a scenario here fails the first test):

- running a run twice (its work done again, as by a duplicate delivery) leaves the state the
  first run left;
- a run whose worker died holding it (claimed, never closed) is handed to the next worker once
  its lease has run out, and done once;
- a provider failure is retried with backoff and ends ``failed`` with its error kept;
- `loom runs retry` of that failed run succeeds once the fault is gone;
- a run that already succeeded is a no-op: no provider call, no change.

The actor's function is called in this process, as a worker thread would call it."""

import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import pytest
from sqlalchemy import text
from sqlmodel import col, select
from typer.testing import CliRunner

import cli
from models import db
from models.brief import SessionBrief
from models.conversation import Embedding, Thread, Turn, TurnKey
from models.erasure import ErasureEvent
from models.memory import LoomSession, MemoryThread
from models.settings import get_settings
from models.stage_run import FAILED, RUNNING, SKIPPED, SUCCEEDED, StageRun
from models.transcript import Transcript
from ops.caller import OPERATOR
from ops.registry import call
from tests.support.calls import append, enable_logging
from tests.support.openai_server import words_reply
from workers import ledger, stages

NS = "contract"
TURNS = [
    "the billing export runs at two in the morning",
    "it writes parquet files to the finance bucket",
    "who reads them downstream",
    "the revenue dashboard and the monthly audit",
    "can we move it to four",
    "only after the audit team agrees",
]


@dataclass
class Scenario:
    make: Callable[[str], int]  # a subject needing work (named by the test); its run's id
    state: Callable[[str], tuple]  # what the stage changes, for that subject
    calls: Callable[[], int]  # provider calls made so far


def thread_of(name: str) -> Thread:
    with db.session() as s:
        return s.exec(select(Thread).where(Thread.namespace == NS, Thread.thread_id == name)).one()


def transcript(name: str, n: int) -> None:
    for i in range(n):
        append(NS, name, f"{TURNS[i % len(TURNS)]} ({name} {i})", role="user" if i % 2 == 0 else "assistant")


def turns_state(name: str) -> tuple:
    with db.session() as s:
        turns = s.exec(
            select(Turn.msg_id, Turn.deleted_at).where(Turn.thread_id == name).order_by(Turn.id)
        ).all()
        rows = s.exec(
            select(Embedding.msg_id, Embedding.deleted_at, Embedding.vector.is_not(None))
            .where(Embedding.thread_id == name)
            .order_by(Embedding.id)
        ).all()
        thread = s.exec(
            select(Thread.title, Thread.meta, Thread.turn_count).where(Thread.thread_id == name)
        ).first()
    return tuple(turns), tuple(rows), tuple(thread or ())


@pytest.fixture
def scenarios(llm, monkeypatch) -> dict[str, Scenario]:
    from models.stages import TITLING
    from pipelines import appending
    from pipelines import thread_index as thread_indexing
    from providers import embedders
    from schedules.night_weaving import weave_night
    from workers.stages import compaction, erasure, ingest, retention
    from workers.stages import screening as rescreening

    enable_logging(NS)
    embedded: list[int] = []
    real = embedders.get_embedder

    class Counting:
        def __init__(self) -> None:
            self.inner = real()
            self.name = self.inner.name

        def embed(self, texts):
            embedded.append(len(texts))
            if llm.mode == "fail":  # one switch breaks every provider of the test
                raise embedders.EmbedderUnavailable("embedder is down")
            return self.inner.embed(texts)

    monkeypatch.setattr("workers.bodies.get_embedder", Counting)  # the memory stage's too
    monkeypatch.setattr("workers.stages.compaction.get_embedder", Counting)

    written: list[str] = []
    real_write = appending.write

    def counting_write(conn, turn):  # the ingest stage's "provider": the write path
        written.append(turn.msg_id)
        if llm.mode == "fail":
            raise RuntimeError("the write path is failing")
        return real_write(conn, turn)

    monkeypatch.setattr(appending, "write", counting_write)

    def embedding_run(name: str) -> int:
        turn_id = append(NS, name, f"a turn to embed for {name}")["turn_id"]
        with db.session() as s:
            row = s.exec(select(Embedding.id).where(Embedding.turn_id == turn_id)).one()
            return s.exec(select(StageRun.id).where(StageRun.subject == f"embedding:{row}")).one()

    def memory_embedding_run(name: str) -> int:
        body = {"namespace": NS, "content": f"a memory to embed for {name}", "tags": [name]}
        thread = call("memory.set", OPERATOR, body)["thread"]
        with db.session() as s:
            row = s.exec(select(MemoryThread.row_id).where(MemoryThread.id == thread["id"])).one()
            return s.exec(select(StageRun.id).where(StageRun.subject == f"memory_thread:{row}")).one()

    def memory_state(name: str) -> tuple:
        with db.session() as s:
            return tuple(
                s.exec(
                    select(MemoryThread.id, MemoryThread.vector.is_not(None)).where(
                        MemoryThread.tags.contains([name])
                    )
                ).all()
            )

    def lists_reply(name: str):
        """Answers an extraction (facts) or a night weaving (episodes) with one item citing line 1,
        a brief window with a revision, and any other stage's request as ever."""

        def reply(request: dict) -> dict:
            schema = json.dumps(request.get("tools", request["messages"][0]))
            if '"new_decisions"' in schema:  # a brief window's revision
                return {"status": f"{name} is moving the export", "new_decisions": [f"{name}: at four"]}
            for field in ("facts", "episodes"):
                if f'"{field}"' in schema:
                    return {field: [{"content": f"{name} runs the billing export", "lines": [1]}]}
            return words_reply(request)

        return reply

    def extraction_run(name: str) -> int:
        llm.reply = lists_reply(name)
        body = {
            "namespace": NS,
            "thread_id": name,
            "run_id": name,
            "messages": [{"role": "user", "content": f"I run the billing export ({name})"}],
        }
        return call("memory.set_from_messages", OPERATOR, body)["run"]["id"]

    def extraction_state(name: str) -> tuple:
        with db.session() as s:
            return tuple(
                s.exec(
                    select(MemoryThread.content, MemoryThread.evidence_ids)
                    .where(MemoryThread.run_id == name)
                    .order_by(MemoryThread.row_id)
                ).all()
            )

    def night_weaving_run(name: str) -> int:
        llm.reply = lists_reply(name)
        transcript(name, 4)
        where = {"namespace": NS, "thread_id": name}
        session = call("context.pack", OPERATOR, where)["session"]["id"]
        sent = weave_night()
        with db.session() as s:
            row = s.exec(select(LoomSession.row_id).where(LoomSession.id == session)).one()
            return s.exec(
                select(StageRun.id).where(
                    StageRun.subject == f"loom_session:{row}", col(StageRun.id).in_(sent)
                )
            ).one()

    def reflection_run(name: str) -> int:
        llm.reply = lambda request: {"answer": f"{name} runs the billing export [t:00000000]"}
        for content in (f"{name} runs the billing export at two", f"{name} runs the billing export at four"):
            call("memory.set", OPERATOR, {"namespace": NS, "content": content, "subjects": [name]})
        body = {"namespace": NS, "question": f"when does {name} run the billing export", "wait_seconds": 0}
        return call("memory.reflect", OPERATOR, body)["run_id"]

    def reflection_state(name: str) -> tuple:
        with db.session() as s:
            return tuple(
                s.exec(
                    select(StageRun.result).where(
                        StageRun.stage == "reflection", StageRun.params["question"].astext.contains(name)
                    )
                ).all()
            )

    def brief_window_run(name: str) -> int:
        llm.reply = lists_reply(name)
        events = [{"kind": "user", "text": f"move the billing export to four ({name})"}]
        body = {"namespace": NS, "brief_key": name, "events": events, "wait_seconds": 0}
        (run_id,) = call("session.brief_save", OPERATOR, body)["run_ids"]
        return run_id

    def brief_state(name: str) -> tuple:
        with db.session() as s:
            brief = s.exec(
                select(SessionBrief).where(SessionBrief.namespace == NS, SessionBrief.brief_key == name)
            )
            return tuple((b.revision, json.dumps(b.sections, sort_keys=True)) for b in brief)

    def night_state(name: str) -> tuple:
        with db.session() as s:
            session = s.exec(select(LoomSession).where(LoomSession.thread_id == name)).one()
            woven = s.exec(
                select(MemoryThread.content, MemoryThread.basis)
                .where(MemoryThread.namespace == NS, MemoryThread.basis == "Woven")
                .where(MemoryThread.content.contains(name))
            ).all()
        return session.consolidated_up_to_sequence, session.awaiting_night, tuple(woven)

    def compaction_run(name: str) -> int:
        transcript(name, 16)
        with db.session() as s:
            return compaction.request(s, thread_of(name).id, "default", 10, 4).id

    def title_run(name: str) -> int:
        transcript(name, 4)
        with db.session() as s:
            return ledger.request(s, TITLING, thread_of(name).id, "contract", {}).id

    def ingest_run(name: str) -> int:
        raw = json.dumps([{"role": "user", "content": f"{line} ({name})"} for line in TURNS])
        with db.session() as s:
            transcript = Transcript(
                namespace=NS, thread_id=name, agent="default", raw=raw, digest=name, size_bytes=len(raw)
            )
            s.add(transcript)
            s.flush()
            return ledger.request(s, ingest.INGEST, transcript.id, "contract", {}).id

    judged: list[str] = []
    real_screen = rescreening.screening.screen

    def counting_screen(text):  # the screening stage's "provider": the rules
        judged.append(text)
        if llm.mode == "fail":
            raise RuntimeError("the rules are failing")
        return real_screen(text)

    monkeypatch.setattr(rescreening.screening, "screen", counting_screen)

    def screening_run(name: str) -> int:
        """A turn an older rules version judged plain that today's rules read as high (its text
        changed under it here, as the rules would have), in a range of its own (span 1)."""
        turn_id = append(NS, name, f"the deploy note for {name}")["turn_id"]
        with db.session() as s:
            s.exec(
                text(
                    "UPDATE turns SET screened_with = 0, content = content || ' password: Tr0ub4dor&3x' "
                    "WHERE id = :id"
                ),
                params={"id": turn_id},
            )
            version = rescreening.screening.RULES_VERSION
            params = {"span": 1, "version": version, "namespace": None}
            return ledger.request(s, rescreening.SCREENING, turn_id, str(version), params).id

    def screening_state(name: str) -> tuple:
        with db.session() as s:
            turns = s.exec(select(Turn.sensitivity, Turn.screened_with).where(Turn.thread_id == name)).all()
        return tuple(turns), turns_state(name)

    dropped: list[datetime] = []
    real_drop = retention._drop

    def counting_drop(run, month):  # the retention stage's "provider": the drop of a month
        dropped.append(month)
        if llm.mode == "fail":
            raise RuntimeError("the drop is failing")
        return real_drop(run, month)

    monkeypatch.setattr(retention, "_drop", counting_drop)

    def retention_run(name: str) -> int:
        """A month of its own (one of the 1980s, a test each) holding two turns, to drop."""
        month = next(UNUSED_MONTHS)
        for i in range(2):
            append(
                NS, name, f"{TURNS[i]} ({name})", ts=f"{month // 100}-{month % 100:02d}-0{i + 1}T10:00:00Z"
            )
        with db.session() as s:
            return ledger.request(s, retention.RETENTION, month, "drop", {"action": "drop"}).id

    def retention_state(name: str) -> tuple:
        with db.session() as s:
            keys = s.exec(select(TurnKey.msg_id).where(TurnKey.thread_id == name)).all()
        return tuple(sorted(keys)), turns_state(name)

    indexed: list[str] = []
    real_write_turns = thread_indexing.write_turns
    coding_threads_of: dict[str, str] = {}

    def counting_write_turns(thread, *args):  # the indexing stage's "provider": the appends
        indexed.append(thread.thread_id)
        if llm.mode == "fail":
            raise RuntimeError("the appends are failing")
        return real_write_turns(thread, *args)

    monkeypatch.setattr(thread_indexing, "write_turns", counting_write_turns)

    def thread_index_run(name: str) -> int:
        from loom.threads import MessageSnapshot, Thread

        from ops import coding_threads

        thread = Thread(
            conversation={"messages": [MessageSnapshot(role="user", content=f"{TURNS[0]} ({name})")]}
        )
        coding_threads_of[name] = thread.id
        coding_threads.upsert(OPERATOR, thread.model_dump(mode="json"), namespace=NS)
        with db.session() as s:
            return s.exec(
                select(StageRun.id).where(StageRun.stage == "thread_index").order_by(col(StageRun.id).desc())
            ).first()

    def thread_index_state(name: str) -> tuple:
        return turns_state(coding_threads_of[name])

    batches: list[str] = []
    real_batch = erasure._one_batch

    def counting_batch(run, table, statement, params):  # the erasure stage's "provider": a batch
        batches.append(table)
        if llm.mode == "fail":
            raise RuntimeError("the batch is failing")
        return real_batch(run, table, statement, params)

    monkeypatch.setattr(erasure, "_one_batch", counting_batch)

    def erasure_run(name: str) -> int:
        for i in range(3):
            append(NS, name, f"{TURNS[i]} ({name})", user_id=name)
        return call("erasure.request", OPERATOR, {"namespace": NS, "user_id": name})["run"]["id"]

    def erasure_state(name: str) -> tuple:
        with db.session() as s:
            events = s.exec(
                select(ErasureEvent.event, ErasureEvent.rows).where(
                    ErasureEvent.scope["user_id"].astext == name
                )
            ).all()
        return tuple(events), turns_state(name)

    from workers.stages import contexts

    rebuilt: list[int] = []
    real_rebuild = contexts._batch

    def counting_rebuild(run, threads):  # the contexts stage's "provider": a batch of threads
        rebuilt.append(len(threads))
        if llm.mode == "fail":
            raise RuntimeError("the rebuild is failing")
        return real_rebuild(run, threads)

    monkeypatch.setattr(contexts, "_batch", counting_rebuild)

    def contexts_run(name: str) -> int:
        """A month of its own holding a thread of three turns written, as before contexts
        existed, without theirs."""
        month = next(UNUSED_MONTHS)
        for i in range(3):
            append(
                NS, name, f"{TURNS[i]} ({name})", ts=f"{month // 100}-{month % 100:02d}-0{i + 1}T10:00:00Z"
            )
        with db.session() as s:
            s.exec(
                text("UPDATE turns SET context_lexemes = NULL, context_length = 0 WHERE thread_id = :t"),
                params={"t": name},
            )
            s.exec(
                text(
                    "UPDATE threads SET said_msg_id = NULL, said_lexemes = NULL, said_context = NULL "
                    "WHERE thread_id = :t"
                ),
                params={"t": name},
            )
            return ledger.request(s, contexts.CONTEXTS, month, contexts.VERSION, {}).id

    def contexts_state(name: str) -> tuple:
        with db.session() as s:
            turns = s.execute(
                text(
                    "SELECT msg_id, context_lexemes::text, context_length FROM turns WHERE thread_id = :t "
                    "ORDER BY id"
                ),
                {"t": name},
            ).all()
            thread = s.execute(
                text(
                    "SELECT said_msg_id, said_lexemes::text, said_context::text FROM threads "
                    "WHERE thread_id = :t"
                ),
                {"t": name},
            ).one()
        return tuple(turns), tuple(thread)

    return {
        "contexts": Scenario(contexts_run, contexts_state, lambda: len(rebuilt)),
        "erasure": Scenario(erasure_run, erasure_state, lambda: len(batches)),
        "retention": Scenario(retention_run, retention_state, lambda: len(dropped)),
        "screening": Scenario(screening_run, screening_state, lambda: len(judged)),
        "ingest": Scenario(ingest_run, turns_state, lambda: len(written)),
        "embedding": Scenario(embedding_run, turns_state, lambda: len(embedded)),
        "memory_embedding": Scenario(memory_embedding_run, memory_state, lambda: len(embedded)),
        "extraction": Scenario(extraction_run, extraction_state, lambda: len(llm.chat_calls)),
        "night_weaving": Scenario(night_weaving_run, night_state, lambda: len(llm.chat_calls)),
        "brief_window": Scenario(brief_window_run, brief_state, lambda: len(llm.chat_calls)),
        "reflection": Scenario(reflection_run, reflection_state, lambda: len(llm.chat_calls)),
        "thread_index": Scenario(thread_index_run, thread_index_state, lambda: len(indexed)),
        "compaction": Scenario(compaction_run, turns_state, lambda: len(llm.chat_calls) + len(embedded)),
        "title": Scenario(title_run, turns_state, lambda: len(llm.chat_calls)),
    }


STAGES = sorted(stages.all_stages())
UNUSED_MONTHS = (year * 100 + month for year in itertools.count(1980) for month in range(1, 13))


def run_once(stage: str, run_id: int) -> StageRun:
    """One delivery of the run to its actor. Every other pending run is parked first (the turns a
    scenario appends have embedding runs): a claim fills its batch with any claimable run of the
    stage, and this test is about one."""
    with db.session() as s:
        s.exec(
            text(
                "UPDATE stage_runs SET status = 'skipped', reason = 'parked' "
                "WHERE status = 'pending' AND id <> :id"
            ),
            params={"id": run_id},
        )
    stages.body(stages.get(stage))([run_id])
    return ledger.get(run_id)


def outcome(run: StageRun) -> tuple:
    return run.status, run.attempts, run.reason, run.result, run.updated_at, run.finished_at


def name_for(stage: str, request) -> str:
    return f"{stage}-{request.node.name.split('[')[0][-24:]}"


@pytest.mark.parametrize("stage", STAGES)
def test_running_a_run_twice_leaves_the_same_state(scenarios, stage, request):
    assert stage in scenarios, f"the {stage} stage has no scenario in the contract test"
    it, name = scenarios[stage], name_for(stage, request)
    run_id = it.make(name)
    assert run_once(stage, run_id).status == SUCCEEDED
    after_first = it.state(name)
    with db.session() as s:  # delivered again as if its first outcome had never been recorded
        s.exec(text("UPDATE stage_runs SET status = 'pending' WHERE id = :id"), params={"id": run_id})
    again = run_once(stage, run_id)
    assert again.status in (SUCCEEDED, SKIPPED) and it.state(name) == after_first


@pytest.mark.parametrize("stage", STAGES)
def test_a_run_whose_worker_died_is_handed_on_once_its_lease_ran_out(scenarios, stage, request):
    it, name = scenarios[stage], name_for(stage, request)
    run_id = it.make(name)
    before = it.state(name)
    [held] = ledger.claim(stage, [run_id], fill=1)  # the worker that dies holding it
    assert held.id == run_id and run_once(stage, run_id).status == RUNNING  # no one else takes it
    assert it.state(name) == before
    with db.session() as s:  # its lease runs out
        s.exec(
            text("UPDATE stage_runs SET lease_expires_at = now() - interval '1 second' WHERE id = :id"),
            params={"id": run_id},
        )
    done = run_once(stage, run_id)
    assert done.status == SUCCEEDED and done.attempts == 2
    with db.session() as s:  # the dead worker's claim can no longer close it
        ledger.finish(s, [held], FAILED, reason="late")
    assert ledger.get(run_id).status == SUCCEEDED


@pytest.mark.parametrize("stage", STAGES)
def test_a_failing_provider_backs_off_then_fails_and_an_operator_retry_succeeds(
    scenarios, stage, request, llm, monkeypatch
):
    it, name = scenarios[stage], name_for(stage, request)
    run_id = it.make(name)
    before = it.state(name)
    llm.mode = "fail"
    real_release, backoffs = ledger.release, []

    def recording_release(*args, **kwargs):  # what each failed attempt was told to wait
        retrying = real_release(*args, **kwargs)
        backoffs.extend(wait for wait, ids in retrying.items() if run_id in ids)
        return retrying

    monkeypatch.setattr(ledger, "release", recording_release)
    deadline = time.monotonic() + 30
    while (run := run_once(stage, run_id)).status != FAILED:
        assert time.monotonic() < deadline, run
        time.sleep(0.02)
    assert run.attempts == get_settings().stage_max_attempts and run.last_error
    # Every attempt but the last went back to pending with a backoff, doubling.
    assert backoffs == [ledger.backoff(n) for n in range(1, get_settings().stage_max_attempts)]
    assert all(wait.total_seconds() > 0 for wait in backoffs)
    assert it.state(name) == before
    llm.mode = "ok"
    retried = CliRunner().invoke(cli.app, ["runs", "retry", str(run_id)])
    assert retried.exit_code == 0, retried.output
    deadline = time.monotonic() + 30
    while (run := run_once(stage, run_id)).status != SUCCEEDED:
        assert time.monotonic() < deadline, run
        time.sleep(0.02)
    assert it.state(name) != before


@pytest.mark.parametrize("stage", STAGES)
def test_a_run_that_succeeded_is_a_no_op(scenarios, stage, request):
    it, name = scenarios[stage], name_for(stage, request)
    run_id = it.make(name)
    assert run_once(stage, run_id).status == SUCCEEDED
    state, calls, run = it.state(name), it.calls(), outcome(ledger.get(run_id))
    assert outcome(run_once(stage, run_id)) == run
    assert it.state(name) == state and it.calls() == calls
