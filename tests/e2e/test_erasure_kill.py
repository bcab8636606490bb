"""An erasure run killed midway is finished once by the next worker: `loom up` with small erasure
batches, a person's many turns and embedding rows, the worker killed with SIGKILL while it
tombstones them; afterwards every one is tombstoned, the run's counts are whole (nothing counted
twice), and the erasure log says it finished exactly once."""

import os
import signal
import time

import httpx
import pytest

from tests.e2e.conftest import wait_for

pytestmark = pytest.mark.e2e

TURNS = 20_000


def test_an_erasure_run_killed_midway_is_finished_once(loom):
    loom.env["LOOM_ERASURE_BATCH"] = "200"
    loom.up()
    token = loom.cli("tokens", "create", "--namespace", "kill-erasure", "--role", "admin").strip()
    http = httpx.Client(
        base_url=f"http://127.0.0.1:{loom.port}", headers={"Authorization": f"Bearer {token}"}, timeout=60
    )
    # The person's history, written straight to the tables (the write path is not under test here),
    # said an hour ago but within this month: a fresh `loom up` has partitions from this month on
    # (the write path would make an earlier one; this INSERT does not).
    loom.sql(
        "INSERT INTO turns (namespace, thread_id, agent, msg_id, role, content, metadata, sensitivity, "
        "screened_with, ts, user_id) "
        "SELECT 'kill-erasure', 't' || mod(i, 50), 'default', 'm' || i, 'user', 'note ' || i, '{}', "
        "'none', 1, greatest(now() - interval '1 hour', date_trunc('month', now(), 'UTC')), 'zoe' "
        "FROM generate_series(1, %s) i RETURNING 1",
        TURNS,
    )
    loom.sql(
        "INSERT INTO embeddings (turn_id, namespace, thread_id, agent, msg_id, role, user_id, text, "
        "digest, created_at) SELECT id, namespace, thread_id, agent, msg_id, role, user_id, content, "
        "md5(content), ts FROM turns WHERE namespace = 'kill-erasure' RETURNING 1"
    )
    answer = http.post("/v1/erasure.request", json={"namespace": "kill-erasure", "user_id": "zoe"})
    assert answer.status_code == 200, answer.text
    run_id, erasure_id = answer.json()["run"]["id"], answer.json()["erasure_id"]

    def erased() -> int:
        return loom.sql("SELECT count(*) FROM turns WHERE user_id = 'zoe' AND deleted_at IS NOT NULL")[0][0]

    wait_for(lambda: 0 < erased() < TURNS, 60, "the worker to be erasing")
    os.kill(loom.worker_pid(), signal.SIGKILL)
    time.sleep(0.5)
    assert 0 < erased() < TURNS

    def done() -> bool:
        return loom.sql("SELECT status FROM stage_runs WHERE id = %s", run_id)[0][0] == "succeeded"

    wait_for(done, 120, "the erasure run to be finished by the restarted worker")
    assert erased() == TURNS
    assert loom.sql("SELECT count(*) FROM embeddings WHERE user_id = 'zoe' AND deleted_at IS NULL") == [(0,)]
    [(attempts, result)] = loom.sql("SELECT attempts, result FROM stage_runs WHERE id = %s", run_id)
    assert attempts >= 2 and result == {"turns": TURNS, "embeddings": TURNS}
    events = loom.sql("SELECT event, rows FROM erasure_log WHERE erasure_id = %s ORDER BY id", erasure_id)
    assert events == [("requested", None), ("finished", {"turns": TURNS, "embeddings": TURNS})]
    assert loom.stop() == 0
