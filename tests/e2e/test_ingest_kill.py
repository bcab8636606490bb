"""An ingest run killed midway is finished once by the next worker: `loom up`, a transcript handed
over whole, the worker killed with SIGKILL while it appends; afterwards every turn is stored
exactly once and embedded, and the run succeeded."""

import json
import os
import signal
import time

import httpx
import pytest

from tests.e2e.conftest import wait_for

pytestmark = pytest.mark.e2e

TURNS = 1500


def test_an_ingest_run_killed_midway_is_finished_once(loom):
    loom.up()
    token = loom.cli("tokens", "create", "--namespace", "kill-ingest", "--role", "admin").strip()
    http = httpx.Client(
        base_url=f"http://127.0.0.1:{loom.port}", headers={"Authorization": f"Bearer {token}"}, timeout=60
    )
    assert http.post("/v1/conversation.set_logging", json={"enabled": True}).status_code == 200
    transcript = json.dumps(
        [
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"turn {i}: the billing export, step {i % 13}",
            }
            for i in range(TURNS)
        ]
    )
    answer = http.post("/v1/conversation.ingest", json={"thread_id": "big", "transcript": transcript})
    assert answer.status_code == 200, answer.text
    run_id = answer.json()["run"]["id"]

    def stored() -> int:
        return loom.sql("SELECT count(*) FROM turns WHERE thread_id = 'big'")[0][0]

    wait_for(lambda: 0 < stored() < TURNS, 60, "the worker to be appending")
    os.kill(loom.worker_pid(), signal.SIGKILL)
    time.sleep(0.5)  # a statement the server was running when its client died still commits
    partial = stored()
    assert 0 < partial < TURNS

    def done() -> bool:
        return loom.sql("SELECT status FROM stage_runs WHERE id = %s", run_id)[0][0] == "succeeded"

    wait_for(done, 120, "the ingest run to be finished by the restarted worker")
    assert loom.sql("SELECT count(*), count(DISTINCT msg_id) FROM turns WHERE thread_id = 'big'") == [
        (TURNS, TURNS)
    ]
    [(attempts, result)] = loom.sql("SELECT attempts, result FROM stage_runs WHERE id = %s", run_id)
    assert attempts >= 2 and result["duplicate"] == partial and result["stored"] == TURNS - partial

    def embedded() -> bool:
        return (
            loom.sql("SELECT count(*) FROM embeddings WHERE thread_id = 'big' AND vector IS NOT NULL")[0][0]
            == TURNS
        )

    wait_for(embedded, 180, "every turn to be embedded")
    assert loom.stop() == 0
