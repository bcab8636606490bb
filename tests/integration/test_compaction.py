"""conversation.compact against the real database, broker, workers and the local LLM server: the
document's window rules, the summary in place of the originals in search, the refusals, and a
stage that is safe to run twice and backs off when its model fails."""

import logging
import threading

import pytest
from sqlalchemy import text
from sqlmodel import col, select
from typer.testing import CliRunner

import cli
from models import db
from models.conversation import Embedding, Thread, Turn
from models.settings import get_settings
from models.stage_run import FAILED, SKIPPED, SUCCEEDED
from ops.caller import OPERATOR
from ops.errors import OpError
from ops.registry import call
from pipelines import compaction
from tests.support.calls import append, enable_logging, found_lexically
from tests.support.rows import context_of, lexemes_of
from tests.support.waits import settled, wait_until
from workers import ledger

NS = "compaction"
TOPICS = [
    "kubernetes autoscaling thresholds",
    "postgres vacuum settings",
    "redis eviction policy",
    "terraform state locking",
    "grafana alert routing",
    "nginx upstream timeouts",
    "kafka consumer lag",
    "s3 lifecycle rules",
    "dns failover records",
    "ci cache invalidation",
    "helm chart versions",
    "tls certificate renewal",
]


def setup_module():
    enable_logging(NS)


def transcript(thread: str, n: int, agent: str = "default", start: int = 0) -> list[dict]:
    answers = []
    for i in range(start, start + n):
        role = "user" if i % 2 == 0 else "assistant"
        words = f"turn {i} about {TOPICS[i % len(TOPICS)]} in the {thread} thread"
        answers.append(append(NS, thread, words, role=role, agent=agent, msg_id=f"{thread}-{i}"))
    return answers


def compact(thread: str, **extra) -> dict:
    body = {"namespace": NS, "thread_id": thread, "wait": True, "wait_seconds": 60, **extra}
    return call("conversation.compact", OPERATOR, body)


def live(thread: str, agent: str | None = None) -> list[Turn]:
    body = {"namespace": NS, "thread_id": thread, "limit": 500, **({"agent": agent} if agent else {})}
    return call("conversation.list", OPERATOR, body)["messages"]


def prompts(server) -> list[str]:
    return [messages[-1]["content"] for messages in server.chat_calls]


def test_without_a_provider_compact_is_refused_and_writes_nothing():
    transcript("no-provider", 6)
    before = runs()
    with pytest.raises(OpError) as refused:
        compact("no-provider")
    assert refused.value.status == 409 and "LOOM_LLM_PROVIDER=fake" in refused.value.reason
    assert runs() == before and len(live("no-provider")) == 6


def runs() -> int:
    with db.session() as s:
        return s.exec(text("SELECT count(*) FROM stage_runs WHERE stage = 'compaction'")).scalar()


def test_the_oldest_turns_become_one_embedded_summary_found_in_their_place(llm, worker):
    transcript("basic", 20)
    wait_until(settled, what="the embeddings")
    answer = compact("basic")
    run = answer["run"]
    assert run["status"] == SUCCEEDED, run
    assert run["result"]["messages_summarized"] == 10
    turns = live("basic")
    summary = turns[0]
    assert len(turns) == 11 and summary["role"] == "system"
    assert summary["metadata"]["compacted_from"] == [f"basic-{i}" for i in range(10)]
    assert summary["msg_id"] == run["result"]["summary_msg_id"]
    assert summary["ts"] == first_ts("basic")
    assert [t["msg_id"] for t in turns[1:]] == [f"basic-{i}" for i in range(10, 20)]
    with db.session() as s:
        originals = s.exec(
            select(Turn).where(Turn.thread_id == "basic", col(Turn.msg_id).like("basic-%"))
        ).all()
        gone = {t.msg_id for t in originals if t.deleted_at is not None}
        rows = s.exec(select(Embedding).where(Embedding.thread_id == "basic")).all()
    assert gone == {f"basic-{i}" for i in range(10)}
    assert all(row.deleted_at is not None for row in rows if row.msg_id in gone)
    [summary_row] = [row for row in rows if row.msg_id == summary["msg_id"]]
    assert summary_row.vector is not None and summary_row.deleted_at is None
    hits = call(
        "conversation.search",
        OPERATOR,
        {"namespace": NS, "thread_id": "basic", "query": "turn 3 about terraform state locking", "limit": 20},
    )["hits"]
    found = [hit["msg_id"] for hit in hits]
    assert summary["msg_id"] in found and not gone & set(found)
    # The prompt held the window, and only the window.
    [sent] = prompts(llm)
    assert "turn 0 about" in sent and "turn 9 about" in sent and "turn 10 about" not in sent
    with db.session() as s:
        assert s.exec(select(Thread.turn_count).where(Thread.thread_id == "basic")).one() == 11


def first_ts(thread: str) -> str:
    with db.session() as s:
        return (
            s.exec(select(Turn.ts).where(Turn.thread_id == thread, Turn.msg_id == f"{thread}-0"))
            .one()
            .isoformat()
        )


def test_compacting_again_is_the_same_run_and_changes_nothing(llm, worker):
    transcript("twice", 16)
    first = compact("twice")["run"]
    again = compact("twice")["run"]
    assert first["status"] == SUCCEEDED and again["id"] != first["id"]  # the summary is a new turn
    assert again["status"] == SKIPPED and again["reason"] == "nothing-to-compact"
    same = compact("twice")["run"]
    assert same["id"] == again["id"]
    assert len(llm.chat_calls) == 1 and len(live("twice")) == 11


def test_fewer_than_min_to_compact_new_turns_are_left_alone(llm, worker):
    transcript("few", 13)
    run = compact("few")["run"]
    assert (run["status"], run["reason"]) == (SKIPPED, "nothing-to-compact")
    assert llm.chat_calls == [] and len(live("few")) == 13


def test_an_earlier_summary_counts_toward_neither_min_nor_messages_summarized(llm, worker):
    transcript("again", 20)
    assert compact("again")["run"]["status"] == SUCCEEDED
    transcript("again", 3, start=20)
    assert compact("again")["run"]["reason"] == "nothing-to-compact"  # summary + 3 new turns
    transcript("again", 1, start=23)
    run = compact("again")["run"]
    assert run["status"] == SUCCEEDED
    assert run["result"]["messages_summarized"] == 4 and run["result"]["summaries_folded"] == 1
    assert prompts(llm)[-1].startswith("Earlier summaries:")
    turns = live("again")
    assert len(turns) == 11 and turns[0]["metadata"]["compacted_from"][-1].startswith("summary-")


def test_a_turn_that_reads_as_high_stays_live_and_is_never_sent(llm, worker):
    transcript("secret", 3)
    high = append(
        NS, "secret", "the prod key is sk-proj-AbCdEf1234567890GhIjKlMnOpQrStUvWxYz12", msg_id="secret-x"
    )
    assert high["sensitivity"] == "high"
    transcript("secret", 14, start=3)
    run = compact("secret")["run"]
    assert run["status"] == SUCCEEDED and run["result"]["messages_summarized"] == 7
    order = [t["msg_id"] for t in live("secret")]
    assert order[0].startswith("summary-") and order[1] == "secret-x"
    assert not any("sk-proj" in p for p in prompts(llm))


def test_a_saved_turn_is_never_summarised_nor_tombstoned(llm, worker):
    transcript("saved", 17)
    saved = call(
        "conversation.save_message",
        OPERATOR,
        {"namespace": NS, "conversation_id": "saved", "message_id": "saved-2", "user_id": "ana"},
    )
    assert saved["saved"] and saved["indexed"]
    run = compact("saved")["run"]
    assert run["status"] == SUCCEEDED and run["result"]["messages_summarized"] == 6
    order = [t["msg_id"] for t in live("saved")]
    assert order[0].startswith("summary-") and order[1] == "saved-2"
    assert not any("turn 2 about" in p for p in prompts(llm))
    found = call(
        "conversation.search_saved_messages",
        OPERATOR,
        {"namespace": NS, "user_id": "ana", "query": "redis eviction"},
    )
    assert [h["message_id"] for h in found["hits"]] == ["saved-2"]


def test_the_turn_after_a_window_takes_its_context_from_the_live_turn_before_it(llm, worker):
    """The first turn kept after the window held the words of the window's last turn: rebuilt in
    the compaction's transaction from the live said turn before the window's (a saved one here)."""
    transcript("window", 16)
    save = {"namespace": NS, "conversation_id": "window", "message_id": "window-3", "user_id": "kit"}
    assert call("conversation.save_message", OPERATOR, save)["saved"]
    assert "window-6" in found_lexically(NS, "nginx upstream timeouts", thread_id="window")  # turn 5's words
    run = compact("window")["run"]
    assert run["status"] == SUCCEEDED and run["result"]["messages_summarized"] == 5
    assert "window-6" not in found_lexically(NS, "nginx upstream timeouts", thread_id="window")
    assert context_of(NS, "window", "window-6") == lexemes_of(live("window")[1]["content"])
    assert live("window")[1]["msg_id"] == "window-3"


def test_a_copy_logged_after_the_save_by_another_agent_is_kept_verbatim_too(llm, worker):
    transcript("saved-copy", 14, agent="planner")  # under the auto pass's test setting
    saved = call(
        "conversation.save_message",
        OPERATOR,
        {"namespace": NS, "conversation_id": "saved-copy", "message_id": "saved-copy-2", "user_id": "cyd"},
    )
    assert saved["saved"] and saved["indexed"]
    transcript("saved-copy", 14, agent="coder")  # the coder logs the same messages after the save
    run = compact("saved-copy", agent="coder", min_to_compact=3)["run"]
    assert run["status"] == SUCCEEDED and run["result"]["messages_summarized"] == 3
    order = [t["msg_id"] for t in live("saved-copy", agent="coder")]
    assert order[0].startswith("summary-") and order[1] == "saved-copy-2"
    assert not any("turn 2 about" in p for p in prompts(llm))


def test_a_turn_saved_while_its_window_was_summarised_stays_and_the_window_is_chosen_again(llm, worker):
    transcript("late-save", 17)
    released = threading.Event()

    def answer_after_the_save(request: dict) -> dict:
        if not released.is_set():
            call(
                "conversation.save_message",
                OPERATOR,
                {
                    "namespace": NS,
                    "conversation_id": "late-save",
                    "message_id": "late-save-1",
                    "user_id": "bo",
                },
            )
            released.set()
        return {"summary": "an earlier part of the thread, condensed"}

    llm.reply = answer_after_the_save
    run = compact("late-save")["run"]
    assert released.is_set() and run["status"] == SUCCEEDED
    order = [t["msg_id"] for t in live("late-save")]
    assert "late-save-1" in order and order.index("late-save-1") == 1


def test_a_summary_that_reads_as_high_compacts_nothing_and_is_not_retried(llm, worker):
    llm.reply = lambda request: {"summary": "they shared password=Tr0ub4dor&3xyz for the admin panel"}
    transcript("leaky", 16)
    run = compact("leaky")["run"]
    assert (run["status"], run["reason"], run["attempts"]) == (SKIPPED, "summary-high-sensitivity", 1)
    assert len(live("leaky")) == 16


def test_a_failing_model_backs_off_then_fails_and_an_operator_retry_succeeds(llm, worker):
    transcript("flaky", 16)
    llm.mode = "fail"
    run = compact("flaky")["run"]
    assert run["status"] == FAILED and run["attempts"] == get_settings().stage_max_attempts
    assert "summarizer failed" in run["last_error"] and len(live("flaky")) == 16
    llm.mode = "ok"
    retried = CliRunner().invoke(cli.app, ["runs", "retry", str(run["id"])])
    assert retried.exit_code == 0, retried.output
    wait_until(lambda: ledger.get(run["id"]).status == SUCCEEDED, what="the retried run")
    assert len(live("flaky")) == 11


def test_an_embed_failure_of_the_summary_is_retried_and_compacts_nothing_meanwhile(llm, worker, monkeypatch):
    class Down:
        name = "down"

        def embed(self, texts):
            raise RuntimeError("embedder is down")

    monkeypatch.setattr("workers.stages.compaction.get_embedder", lambda: Down())
    transcript("noembed", 16)
    run = compact("noembed")["run"]
    assert run["status"] == FAILED and run["reason"] == "embed-failed"
    assert run["last_error"].startswith("embed-failed")
    assert len(live("noembed")) == 16


def test_a_summary_a_failed_run_left_is_replaced_unread(llm, worker):
    transcript("stale", 16)
    with db.session() as s:
        first = s.exec(select(Turn).where(Turn.thread_id == "stale", Turn.msg_id == "stale-0")).one()
        s.add(
            Turn(
                namespace=NS,
                thread_id="stale",
                agent="default",
                msg_id="summary-left-behind",
                role="system",
                content="STALE SUMMARY TEXT",
                meta={"compacted_from": [f"stale-{i}" for i in range(5)]},
                sensitivity="none",
                ts=first.ts,
            )
        )
    run = compact("stale")["run"]
    assert run["status"] == SUCCEEDED and run["result"]["summaries_replaced_unread"] == 1
    assert run["result"]["messages_summarized"] == 6  # 17 live, 10 kept: the stale one and six turns
    assert not any("STALE SUMMARY TEXT" in p for p in prompts(llm))
    assert "summary-left-behind" not in [t["msg_id"] for t in live("stale")]


def test_a_shared_embedding_row_passes_to_the_other_agents_copy(llm, worker):
    transcript("pair", 16, agent="planner")
    append(
        NS, "pair", "turn 2 about redis eviction policy in the pair thread", msg_id="pair-2", agent="coder"
    )
    wait_until(settled, what="the embeddings")
    assert compact("pair", agent="planner")["run"]["status"] == SUCCEEDED
    with db.session() as s:
        [row] = s.exec(
            select(Embedding).where(Embedding.thread_id == "pair", Embedding.msg_id == "pair-2")
        ).all()
        heir = s.get(Turn, row.turn_id)
    assert (
        row.deleted_at is None and row.agent == "coder" and heir.agent == "coder" and heir.deleted_at is None
    )

    def found(agent: str) -> list[str]:
        body = {"namespace": NS, "thread_id": "pair", "query": "redis eviction policy", "agent": agent}
        return [hit["msg_id"] for hit in call("conversation.search", OPERATOR, body)["hits"]]

    assert "pair-2" in found("coder") and "pair-2" not in found("planner")


def test_the_auto_pass_compacts_transcripts_grown_past_the_setting(llm, worker, monkeypatch):
    from schedules.compaction import compact_grown

    for i in range(20):  # the largest transcript, and one nothing can be compacted of
        append(NS, "stuck", f"card 4111 1111 1111 1111, note {i}", msg_id=f"stuck-{i}")
    transcript("grown", 18)
    transcript("small", 5)
    monkeypatch.setenv("LOOM_COMPACTION_AUTO_TURNS", "15")
    monkeypatch.setenv("LOOM_COMPACTION_AUTO_MAX_THREADS", "1")
    get_settings.cache_clear()
    passes = []
    for _ in range(3):
        passes.append(compact_grown())
        wait_until(settled, what="the compaction")
    assert len(live("grown")) == 11 and len(live("small")) == 5 and len(live("stuck")) == 20
    # The stuck transcript was asked once and takes no place after: the next pass reached "grown".
    assert [len(sent) for sent in passes] == [1, 1, 0]


def test_a_burst_of_requests_is_worked_off_without_waiting_for_the_sweep(llm, worker):
    """Wake-ups are skipped while one waits, so one message stands for many runs: the actor works
    them all off (no sweep runs in these tests)."""
    llm.chat_delay = 0.3
    names = [f"burst-{i}" for i in range(6)]
    for name in names:
        transcript(name, 16)
    runs = [
        call("conversation.compact", OPERATOR, {"namespace": NS, "thread_id": name})["run"] for name in names
    ]
    assert len({run["id"] for run in runs}) == len(names)
    wait_until(settled, timeout=30, what="every compaction of the burst")
    assert all(len(live(name)) == 11 for name in names)


def test_a_worker_that_lost_its_claim_while_it_worked_writes_nothing(llm, worker, monkeypatch, caplog):
    from workers.stages import compaction

    real = compaction.compaction.apply
    takeover = "UPDATE stage_runs SET claim = 'another' WHERE stage = 'compaction' AND status = 'running'"

    def taken_over(s, *args, **kwargs):
        with db.session() as other:  # another worker claimed the run after this one's lease ran out
            other.exec(text(takeover))
        return real(s, *args, **kwargs)

    monkeypatch.setattr(compaction.compaction, "apply", taken_over)
    transcript("taken", 16)
    with caplog.at_level(logging.WARNING, logger="workers.stages.compaction"):
        run = call("conversation.compact", OPERATOR, {"namespace": NS, "thread_id": "taken"})["run"]
        wait_until(lambda: "taken over" in caplog.text, what="the worker to find its claim lost")
    assert len(live("taken")) == 16  # the summary rolled back with the lost claim
    with db.session() as s:  # let the test's own claim go, so the module ends settled
        s.exec(
            text("UPDATE stage_runs SET status = 'skipped', claim = NULL WHERE id = :id"),
            params={"id": run["id"]},
        )


@pytest.mark.parametrize("mode", ["hybrid", "lexical", "semantic"])
def test_a_summary_is_found_by_its_own_text_in_every_mode_ahead_of_turns_with_fewer_words(llm, worker, mode):
    thread = f"found-{mode}"
    said = "the team moved terraform state locking to an s3 backend with a dynamodb lock table"
    llm.reply = lambda request: {"summary": said}
    transcript(thread, 20)
    wait_until(settled, what="the embeddings")
    summary_msg_id = compact(thread)["run"]["result"]["summary_msg_id"]
    body = {"namespace": NS, "thread_id": thread, "query": said, "limit": 5, "search_mode": mode}
    hits = call("conversation.search", OPERATOR, body)["hits"]
    # Live turns of the thread share "terraform state locking": the summary holds every word.
    assert hits and hits[0]["msg_id"] == summary_msg_id, [h["msg_id"] for h in hits]


def test_a_summary_puts_back_what_the_agents_session_holds(llm, worker):
    memory = {"namespace": NS, "thread_id": "pinned", "agent": "default"}
    kept = call("memory.set", OPERATOR, {**memory, "content": "the ledger export runs at two"})["thread"]
    gone = call("memory.set", OPERATOR, {**memory, "content": "the old host is heron"})["thread"]
    for thread in (kept, gone):
        call("memory.pin", OPERATOR, {**memory, "thread": thread["id"]})
    call("memory.cut", OPERATOR, {"namespace": NS, "thread": gone["id"]})
    transcript("pinned", 20)
    assert compact("pinned")["run"]["status"] == SUCCEEDED
    summary = live("pinned")[0]["content"]
    held = f"{compaction.HELD_HEADING}\n- the ledger export runs at two [{kept['id']}]"
    assert summary.endswith("\n\n" + held) and "heron" not in summary
    transcript("pinned", 4, start=20)
    assert compact("pinned")["run"]["status"] == SUCCEEDED  # the summary folds in: its section is new
    assert compaction.HELD_HEADING not in prompts(llm)[-1]
    assert live("pinned")[0]["content"].count(compaction.HELD_HEADING) == 1
    assert live("pinned")[0]["content"].endswith(held)
