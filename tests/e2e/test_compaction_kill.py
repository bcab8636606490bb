"""A compaction killed at any point leaves its thread fully compacted or untouched: `loom up` with
its worker killed with SIGKILL while the summariser answers, and again inside the transaction that
writes the summary; each time the thread is untouched until another worker finishes the run, and
then compacted exactly once."""

import os
import signal

import httpx
import psycopg
import pytest

from services import postgres
from tests.e2e.conftest import wait_for

pytestmark = pytest.mark.e2e

TURNS = 20


def test_a_compaction_killed_anywhere_leaves_the_thread_compacted_once_or_untouched(loom, model):
    loom.env.update(
        LOOM_LLM_PROVIDER="openai",
        LOOM_LLM_BASE_URL=model.base_url,
        LOOM_LLM_MAX_RETRIES="0",
        LOOM_LLM_TIMEOUT_SECONDS="60",
    )
    loom.up()
    token = loom.cli("tokens", "create", "--namespace", "kill", "--role", "admin").strip()
    http = httpx.Client(
        base_url=f"http://127.0.0.1:{loom.port}", headers={"Authorization": f"Bearer {token}"}, timeout=30
    )
    assert http.post("/v1/conversation.set_logging", json={"enabled": True}).status_code == 200
    for thread in ("in-the-model-call", "in-the-write"):
        for i in range(TURNS):
            body = {
                "thread_id": thread,
                "role": "user",
                "content": f"{thread} turn {i} about the rollout plan",
            }
            assert http.post("/v1/conversation.append", json=body).json()["stored"]

    def compact(thread: str) -> int:
        answer = http.post("/v1/conversation.compact", json={"thread_id": thread})
        assert answer.status_code == 200, answer.text
        return answer.json()["run"]["id"]

    def state(thread: str) -> tuple[int, int]:
        """(live turns, summaries ever written) of the thread."""
        [(live, summaries)] = loom.sql(
            "SELECT count(*) FILTER (WHERE deleted_at IS NULL), "
            "count(*) FILTER (WHERE msg_id LIKE 'summary-%%') FROM turns WHERE thread_id = %s",
            thread,
        )
        return live, summaries

    def compacted_once(thread: str, run_id: int) -> None:
        wait_for(
            lambda: loom.sql("SELECT status FROM stage_runs WHERE id = %s", run_id)[0][0] == "succeeded",
            120,
            f"the compaction of {thread} to finish",
        )
        assert state(thread) == (11, 1)
        [(rows,)] = loom.sql(
            "SELECT count(*) FROM embeddings WHERE thread_id = %s AND msg_id LIKE 'summary-%%'", thread
        )
        assert rows == 1
        assert loom.sql("SELECT attempts >= 2 FROM stage_runs WHERE id = %s", run_id) == [(True,)]

    # 1. Killed while the summariser answers.
    model.mode = "stall"
    run_id = compact("in-the-model-call")
    assert model.stalled.wait(60), "the worker never asked the model"
    os.kill(loom.worker_pid(), signal.SIGKILL)
    assert state("in-the-model-call") == (TURNS, 0)
    model.mode = "ok"
    model.release.set()
    compacted_once("in-the-model-call", run_id)

    # 2. Killed inside the transaction that writes the summary: the run's row is held by this test,
    # so the worker's closing of the run waits, every other write of the transaction made.
    model.chat_delay = 3.0
    run_id = compact("in-the-write")
    wait_for(
        lambda: loom.sql("SELECT status FROM stage_runs WHERE id = %s", run_id)[0][0] == "running",
        60,
        "the worker to claim the run",
    )
    holder = psycopg.connect(postgres.url(loom.home).replace("+psycopg", ""))
    try:
        holder.execute("SELECT 1 FROM stage_runs WHERE id = %s FOR UPDATE", [run_id])
        wait_for(
            lambda: loom.sql(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query LIKE 'UPDATE stage_runs SET status%%'"
            )[0][0],
            60,
            "the worker to wait to close the run, the summary written",
        )
        assert state("in-the-write") == (TURNS, 0)  # written, not committed
        os.kill(loom.worker_pid(), signal.SIGKILL)
    finally:
        holder.close()  # the dead worker's transaction goes on, finds its client gone, rolls back
    model.chat_delay = 0.0
    compacted_once("in-the-write", run_id)
