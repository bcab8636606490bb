"""`loom up` as a subprocess, driven over HTTP and the CLI: a worker killed with SIGKILL in the
middle of embedding loses nothing and doubles nothing, and a second `loom up` reuses the data."""

import json
import os
import signal
import time

import httpx
import pytest

from services.ports import is_listening
from tests.e2e.conftest import wait_for

pytestmark = pytest.mark.e2e

TURNS = 300


def test_a_worker_killed_mid_embedding_leaves_every_turn_embedded_exactly_once(loom):
    # The kill must find a batch in flight: the int8 model embeds these 300 turns about as fast as
    # they are appended, so the slower fp32 build keeps the worker busy long enough to be caught.
    loom.env["LOOM_EMBED_PRECISION"] = "fp32"
    loom.up()
    token = loom.cli("tokens", "create", "--namespace", "e2e", "--role", "admin").strip()
    http = httpx.Client(
        base_url=f"http://127.0.0.1:{loom.port}", headers={"Authorization": f"Bearer {token}"}
    )
    assert http.post("/v1/conversation.set_logging", json={"enabled": True}).status_code == 200
    for i in range(TURNS):
        text = f"Turn {i}: notes on the ledger migration, step {i % 17}, owner team {i % 5}. " * 3
        answer = http.post(
            "/v1/conversation.append", json={"thread_id": f"t{i % 10}", "role": "user", "content": text}
        )
        assert answer.json()["stored"] is True

    orphans = []
    for _ in range(10):  # kill the worker while it holds claimed runs
        wait_for(
            lambda: loom.sql("SELECT count(*) FROM stage_runs WHERE status = 'running'")[0][0],
            120,
            "a run in progress",
        )
        os.kill(loom.worker_pid(), signal.SIGKILL)
        time.sleep(0.2)
        orphans = [r[0] for r in loom.sql("SELECT id FROM stage_runs WHERE status = 'running'")]
        if orphans:
            break
    assert orphans, "the worker was never killed mid-embedding"

    def all_done():
        return loom.sql("SELECT count(*) FROM stage_runs WHERE status <> 'succeeded'")[0][0] == 0

    wait_for(all_done, 180, "every run to succeed after the restart")
    assert loom.sql("SELECT count(*), count(DISTINCT turn_id), count(vector) FROM embeddings") == [
        (TURNS, TURNS, TURNS)
    ]
    assert loom.sql("SELECT count(*) FROM stage_runs WHERE stage = 'embedding'") == [(TURNS,)]  # one a turn
    recovered = loom.sql(f"SELECT min(attempts) FROM stage_runs WHERE id IN ({','.join(map(str, orphans))})")
    assert recovered[0][0] >= 2  # claimed again after the dead worker's lease ran out
    body = {"query": "ledger migration step 3", "search_mode": "semantic"}  # the vectors it embedded
    hits = http.post("/v1/conversation.search", json=body).json()
    assert hits["mode"] == "vector" and hits["hits"]

    assert loom.stop() == 0
    ports = json.loads((loom.home / "ports.json").read_text())
    assert not is_listening(ports["postgres"]) and not is_listening(ports["redis"])

    loom.up()  # a second `loom up` reuses the data
    assert loom.sql("SELECT count(*) FROM turns") == [(TURNS,)]
    again = httpx.post(
        f"http://127.0.0.1:{loom.port}/v1/conversation.threads",
        json={},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert again.status_code == 200 and len(again.json()["threads"]) == 10
    assert loom.stop() == 0


def test_loom_up_adopts_servers_a_crashed_loom_up_left_running_and_stops_them_on_ctrl_c(loom):
    from services import postgres, redis

    postgres.start(loom.home)  # as a `loom up` killed with SIGKILL leaves them
    redis.start(loom.home)
    loom.up()
    assert loom.stop() == 0
    ports = loom.ports()
    assert not is_listening(ports["postgres"]) and not is_listening(ports["redis"])


def test_a_second_loom_up_of_one_data_directory_is_refused_before_anything_starts(loom):
    import subprocess
    import sys

    from services.ports import free_port

    loom.up()
    other_port = free_port()
    second = subprocess.run(
        [sys.executable, "-m", "cli", "up"],
        env={**loom.env, "LOOM_PORT": str(other_port)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 2, second.stdout + second.stderr
    assert second.stderr == f"error: Loom is already running from this data directory, pid {loom.proc.pid}\n"
    assert not is_listening(other_port)
    # It wrote nothing among the running one's log files, nor a file of its own.
    assert [path.name for path in (loom.home / "logs").glob("up*")] == ["up.log"]
    assert "already running" not in loom.logged("up")
    assert loom.healthy()  # and the first one's servers still serve it
    loom.cli("runs", "list", "--json")
    assert loom.stop() == 0


def test_loom_up_takes_over_the_lock_of_a_loom_up_that_died(loom):
    (loom.home / "run").mkdir(parents=True)
    (loom.home / "run" / "up.pid").write_text("999999")  # a killed one's file, no lock held
    loom.up()
    assert (loom.home / "run" / "up.pid").read_text() == str(loom.proc.pid)
    assert loom.stop() == 0


def test_a_loom_up_that_cannot_start_is_reported_at_once_with_the_end_of_its_log(loom):
    loom.env["LOOM_HOST"] = "192.0.2.7"  # not a loopback address, and not listed: refused at start
    began = time.monotonic()
    with pytest.raises(AssertionError) as failed:
        loom.up()
    assert time.monotonic() - began < 60
    assert "exited with 2 before /healthz answered; its log ends:" in str(failed.value)
    assert "error: " in str(failed.value).split("its log ends:")[1]
