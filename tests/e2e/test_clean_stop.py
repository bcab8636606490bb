"""Ctrl-C to `loom up` while runs are in flight, as a terminal sends it (SIGINT to the whole process
group): every process exits 0 without a traceback, and each run is either finished or handed back
pending without spending an attempt. A model that never answers keeps one run in flight past the
worker's grace; the next `loom up` finishes it on its first attempt."""

import json
import os
import signal

import httpx
import pytest

from services import postgres
from services.ports import is_listening
from tests.e2e.conftest import wait_for

pytestmark = pytest.mark.e2e

TURNS = 120


def test_ctrl_c_with_runs_in_flight_finishes_or_hands_them_back(loom, model):
    model.chat_delay = 600  # the summariser never answers while this Loom runs
    loom.env.update(
        LOOM_LLM_PROVIDER="openai",
        LOOM_LLM_BASE_URL=model.base_url,
        LOOM_LLM_MAX_RETRIES="0",
        LOOM_LLM_TIMEOUT_SECONDS="600",
        LOOM_WORKER_STOP_GRACE_SECONDS="3",
    )
    loom.up()
    # The banner says that nothing is kept until a namespace records, and how to switch it on.
    assert "Recording: off in every namespace" in loom.printed()
    token = loom.cli("tokens", "create", "--namespace", "stop", "--role", "admin").strip()
    http = httpx.Client(
        base_url=f"http://127.0.0.1:{loom.port}", headers={"Authorization": f"Bearer {token}"}, timeout=30
    )
    assert http.post("/v1/conversation.set_logging", json={"enabled": True}).status_code == 200
    for i in range(20):
        body = {"thread_id": "long", "role": "user", "content": f"turn {i} about the rollout plan"}
        assert http.post("/v1/conversation.append", json=body).json()["stored"]
    compaction = http.post("/v1/conversation.compact", json={"thread_id": "long"}).json()["run"]["id"]
    wait_for(lambda: model.chat_calls, 60, "the summariser to be asked")
    turns = [
        {"role": "user", "content": f"the ferry to island {i} leaves at {i % 12 + 1} o'clock"}
        for i in range(TURNS)
    ]
    ingest = {"thread_id": "batch", "transcript": json.dumps(turns)}
    assert http.post("/v1/conversation.ingest", json=ingest).status_code == 200
    wait_for(
        lambda: (
            loom.sql("SELECT count(*) FROM stage_runs WHERE stage = 'embedding' AND status = 'succeeded'")[0][
                0
            ]
            > 0
        ),
        60,
        "the embedding of the batch to begin",
    )

    os.killpg(loom.proc.pid, signal.SIGINT)  # what Ctrl-C in the terminal does
    assert loom.proc.wait(60) == 0
    printed = loom.printed()
    assert "Traceback" not in printed and "exited with" not in printed, printed[-4000:]
    postgres.start(loom.home)  # `loom up` stopped it; the next one adopts it
    assert not loom.sql("SELECT id FROM stage_runs WHERE status = 'running'")
    spent = loom.sql(
        "SELECT id, stage, status, attempts FROM stage_runs "
        "WHERE NOT (status IN ('succeeded', 'skipped') AND attempts = 1) "
        "AND NOT (status = 'pending' AND attempts = 0)"
    )
    assert not spent, spent
    by_state = loom.sql(
        "SELECT stage, status, attempts, count(*) FROM stage_runs GROUP BY 1, 2, 3 ORDER BY 1, 2"
    )
    print("runs after Ctrl-C (stage, status, attempts, count):", by_state)
    assert loom.sql("SELECT status, attempts FROM stage_runs WHERE id = %s", compaction) == [("pending", 0)]

    model.chat_delay = 0
    loom.up()
    assert "Recording: on in stop; off elsewhere" in loom.printed()
    wait_for(
        lambda: loom.sql("SELECT status FROM stage_runs WHERE id = %s", compaction) == [("succeeded",)],
        120,
        "the compaction handed back to finish",
    )
    assert loom.sql("SELECT attempts FROM stage_runs WHERE id = %s", compaction) == [(1,)]
    wait_for(
        lambda: not loom.sql("SELECT id FROM stage_runs WHERE status IN ('pending', 'running')"),
        120,
        "every run to finish",
    )
    assert loom.sql("SELECT count(*) FROM stage_runs WHERE status NOT IN ('succeeded', 'skipped')") == [(0,)]


def test_children_of_a_loom_up_killed_outright_stop_by_themselves(loom):
    """SIGKILL (or the OOM killer) gives `loom up` no chance to stop its children, each in a
    process group of its own: they see it gone and stop, freeing the port."""
    loom.up()
    children = {name: int((loom.home / "run" / f"{name}.pid").read_text()) for name in CHILDREN}
    os.kill(loom.proc.pid, signal.SIGKILL)
    loom.proc.wait()

    def gone() -> bool:
        return not any(alive(pid) for pid in children.values())

    wait_for(gone, 30, f"the children {children} to stop")
    assert not is_listening(loom.port)


CHILDREN = ("api", "worker", "scheduler")


def alive(pid: int) -> bool:
    """Running, not a zombie (a child reaped by init is gone at once)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
