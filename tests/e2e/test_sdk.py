"""The Python SDK (sdk/python, importable as ``loom``) against a live `loom up`: the document's
example as written, the sync client, flushing to extraction, typed errors, and retries of a 503
and of a connection that fails."""

import asyncio
import time

import pytest
from loom import (
    Agent,
    Conflict,
    ConnectionFailed,
    Forbidden,
    Hit,
    Invalid,
    Memory,
    Pack,
    Recalled,
    Reflection,
    Remembered,
    SearchResult,
    SyncAgent,
    Unauthorized,
    Unavailable,
    WorkingMemory,
)

from services.ports import free_port
from tests.e2e.conftest import Loom, running_loom, wait_for
from tests.support.openai_server import FakeOpenAI

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def model():
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def live(model):
    """`loom up` with the deployment's LLM on the local server (one call an attempt, one attempt a
    run, so a failing model fails a brief window at once), recording on in "dev"."""
    llm = {
        "LOOM_LLM_PROVIDER": "openai",
        "LOOM_LLM_BASE_URL": model.base_url,
        "LOOM_LLM_MAX_RETRIES": "0",
        "LOOM_STAGE_MAX_ATTEMPTS": "1",
    }
    with running_loom("loom-sdk-", recording=("dev",), **llm) as loom:
        yield loom


def token(live: Loom, role: str = "writer", namespace: str = "dev") -> str:
    return live.cli("tokens", "create", "--namespace", namespace, "--role", role).strip()


def url(live: Loom) -> str:
    return f"http://127.0.0.1:{live.port}"


def test_the_documents_example_runs_as_written(live, monkeypatch):
    monkeypatch.setenv("LOOM_TOKEN", token(live))

    async def example():
        async with Agent("dev", "local", "support-bot", base_url=url(live)) as bot:
            s = bot.session("thread-42", user_id="u1")
            resumed = await s.resume(query="resume the billing migration")
            await s.append(
                {"role": "user", "content": "We moved invoices to the new ledger."},
                {"role": "assistant", "content": "Noted; I'll update the export job."},
            )
            stored = s.transcript_stored
            flushed = await s.close()
            saved = await bot.briefs.save(
                project="billing",
                branch="ledger-move",
                sections={"goal": "Move invoices to the new ledger", "next_steps": ["Update the export job"]},
            )
            again = await s.resume()
            brief = await bot.briefs.get(project="billing")
            return resumed, stored, flushed, saved, again, brief

    resumed, stored, flushed, saved, again, brief = asyncio.run(example())
    assert resumed.session["agentName"] == "support-bot" and resumed.tail == []
    assert stored is True
    assert flushed["evidence"] == 2 and flushed["run"]["stage"] == "extraction"
    assert [t["content"] for t in again.tail] == [
        "We moved invoices to the new ledger.",
        "Noted; I'll update the export job.",
    ]
    assert again.tail[0]["user_id"] == "u1" and again.tail[0]["metadata"]["deployment"] == "local"
    assert saved["brief_key"] == "auto/billing/ledger-move" and saved["revision"] == 1
    assert brief["sections"]["next_steps"] == ["Update the export job"]


def test_memory_search_context_and_working_memory_answer_typed_results(live):
    async def calls():
        async with Agent("dev", "local", "support-bot", base_url=url(live), token=token(live)) as bot:
            kept = await bot.memory.set("Ana prefers invoices in EUR.", subjects=["ana"])
            session = bot.session("typed", user_id="ana")
            await session.append({"role": "user", "content": "Send the EUR invoices."})
            await session.close()  # the turn kept as evidence: memory.recall reads it
            note = await bot.working_memory.set("next: the EUR export", project="billing", user_id="ana")
            same = await bot.working_memory.set("next: the EUR export", project="billing", user_id="ana")
            missing = await bot.working_memory.get(project="no-such-project", user_id="ana")
            pack = await bot.context.pack("typed", user_id="ana", project="billing")
            remembered = await bot.memory.search("which currency does Ana want", search_mode="lexical")
            found = await bot.search("EUR invoices", search_mode="lexical")
            recalled = await bot.memory.recall("EUR invoices")
            return kept, note, same, missing, pack, remembered, found, recalled

    kept, note, same, missing, pack, remembered, found, recalled = asyncio.run(calls())
    assert isinstance(kept, Remembered) and kept.stored and isinstance(kept.memory, Memory)
    assert isinstance(note, WorkingMemory) and note.revision == 1 and note.changed
    assert same.revision == 1 and same.changed is False and missing is None
    assert isinstance(pack, Pack) and pack.working_memory.content == "next: the EUR export"
    assert pack.session["subjects"][0] == "ana"
    assert [m.id for m in remembered] == [kept.memory.id] and remembered[0].kind == "Semantic"
    assert isinstance(found, SearchResult) and found.mode == "lexical"
    assert isinstance(found.hits[0], Hit) and found.hits[0].thread_id == "typed"
    assert found.hits[0].ts.tzinfo is not None
    assert (
        isinstance(recalled[0], Recalled) and recalled[0].thread_id == "typed" and recalled[0].role == "user"
    )


def test_memory_reflect_answers_a_typed_reflection_with_its_tensions(live):
    async def calls():
        # A namespace of its own: its threads about Ana are not the memory test's to find.
        agent = Agent(
            "reflecting",
            "local",
            "support-bot",
            base_url=url(live),
            token=token(live, namespace="reflecting"),
        )
        async with agent as bot:
            older = await bot.memory.set("Ana deploys the ledger on Tuesdays.", subjects=["ana"])
            newer = await bot.memory.set("Ana deploys the ledger on Fridays.", subjects=["ana"])
            reflection = await bot.memory.reflect("when does Ana deploy the ledger?", thread_id="reflecting")
            return older.memory.id, newer.memory.id, reflection

    older, newer, reflection = asyncio.run(calls())
    assert isinstance(reflection, Reflection) and reflection.by == "model" and reflection.answer
    assert {older, newer} <= set(reflection.cited) and all(isinstance(m, Memory) for m in reflection.memories)
    assert {"type": "supersedes", "threads": [older, newer], "newer": newer} in [
        {key: t[key] for key in ("type", "threads", "newer")} for t in reflection.tensions
    ]


def test_the_sync_client_flushes_every_n_turns_and_says_when_nothing_is_recorded(live):
    with SyncAgent(
        "quiet", "local", "helper", base_url=url(live), token=token(live, namespace="quiet"), flush_every=2
    ) as bot:
        s = bot.session("t-1", user_id="u2")
        s.append({"role": "user", "content": "first"})
        assert s.transcript_stored is False  # "quiet" does not record
        assert live.sql("SELECT count(*) FROM memory_evidence WHERE namespace = 'quiet'") == [(0,)]
        s.append({"role": "assistant", "content": "second"})  # the second turn flushes both
        assert live.sql("SELECT count(*) FROM memory_evidence WHERE namespace = 'quiet'") == [(2,)]
        assert s.close() is None  # nothing left to flush


def test_errors_are_typed(live):
    with SyncAgent("dev", "local", "bot", base_url=url(live), token="loom_not-a-token") as stranger:
        with pytest.raises(Unauthorized):
            stranger.briefs.list()
    with SyncAgent("dev", "local", "bot", base_url=url(live), token=token(live, "viewer")) as viewer:
        with pytest.raises(Forbidden):
            viewer.briefs.save(brief_key="k", sections={"goal": "x"})
    with SyncAgent("dev", "local", "bot", base_url=url(live), token=token(live)) as bot:
        with pytest.raises(Invalid) as invalid:
            bot.briefs.save(brief_key="no spaces", sections={"goal": "x"})
        assert invalid.value.field == "brief_key"
        bot.briefs.save(brief_key="cas", sections={"goal": "x"})
        with pytest.raises(Conflict):
            bot.briefs.save(brief_key="cas", if_revision=7, sections={"goal": "y"})


def test_a_503_is_retried_with_backoff_and_raised_once_retries_run_out(live, model):
    # The runs earlier tests started (an extraction) finish first: the failure staged below is
    # for the brief's call, not one of theirs.
    quiet = "SELECT count(*) FROM stage_runs WHERE status IN ('pending', 'running')"
    wait_for(lambda: live.sql(quiet)[0][0] == 0, 60, "the earlier tests' runs to finish")
    model.reset()
    model.reply = lambda request: {"status": "the ledger moved"}

    def brief_calls() -> int:  # an extraction run an earlier test started may call the model too
        return sum("The brief as it is" in call[-1]["content"] for call in model.chat_calls)

    with SyncAgent("dev", "local", "bot", base_url=url(live), token=token(live), max_retries=2) as bot:
        events = [{"kind": "assistant", "text": "moved the ledger"}]
        model.fail_next(1)  # the first save's only model call: a 503, then the retry revises
        saved = bot.briefs.save(brief_key="retried", events=events)
        assert saved["changed"] and brief_calls() == 2
        model.mode = "fail"
        started = time.monotonic()
        with pytest.raises(Unavailable):
            bot.briefs.save(brief_key="down", events=events)
        assert brief_calls() == 5 and time.monotonic() - started >= 0.75  # 3 tries, 0.25 + 0.5 s
    model.reset()


def test_a_connection_that_fails_is_retried_then_raised():
    closed = f"http://127.0.0.1:{free_port()}"
    with SyncAgent("dev", "local", "bot", base_url=closed, token="t", max_retries=2) as bot:
        started = time.monotonic()
        with pytest.raises(ConnectionFailed):
            bot.briefs.list()
        assert time.monotonic() - started >= 0.75
