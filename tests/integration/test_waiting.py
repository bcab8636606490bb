"""Calls that answer once runs are done (``wait: true``, brief saves, saved messages) hold no
request thread while they wait, and are woken by the run's end rather than a poll."""

import asyncio
import json
import time

import anyio
import httpx
import pytest
from sqlalchemy import text

from models import db
from models.stage_run import PENDING, SUCCEEDED, StageRun
from ops import waiting
from ops.caller import create_token
from tests.support.calls import enable_logging

NS = "waiting"


def setup_module():
    enable_logging(NS)


def test_calls_waiting_on_runs_leave_the_request_threads_to_an_append():
    """A request pool of 4 threads, 12 ingests waiting on runs no worker takes (8 s each): an
    append beside them is answered at once (a wait that slept on a pool thread made it wait 8 s)."""
    from api.app import create_app

    headers = {"Authorization": f"Bearer {create_token([NS], 'writer')}"}

    def ingest(i: int) -> dict:
        line = {"role": "user", "content": f"the waiting transcript number {i}"}
        return {"thread_id": f"w{i}", "transcript": json.dumps(line), "wait": True, "wait_seconds": 8}

    async def scenario() -> tuple[float, list[httpx.Response]]:
        anyio.to_thread.current_default_thread_limiter().total_tokens = 4
        transport = httpx.ASGITransport(app=create_app(warm_embedder=False))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=60) as client:
            waits = [
                asyncio.create_task(client.post("/v1/conversation.ingest", headers=headers, json=ingest(i)))
                for i in range(12)
            ]
            await asyncio.sleep(1.5)  # every ingest stored its run and waits on it
            started = time.monotonic()
            appended = await client.post(
                "/v1/conversation.append",
                headers=headers,
                json={"thread_id": "beside", "role": "user", "content": "answered while they wait"},
            )
            took = time.monotonic() - started
            assert appended.status_code == 200 and appended.json()["stored"], appended.text
            assert not any(wait.done() for wait in waits)
            return took, await asyncio.gather(*waits)

    took, waited = asyncio.run(scenario())
    assert took < 2, f"an append waited {took:.1f} s behind the waiting calls"
    assert [(r.status_code, r.json()["run"]["status"]) for r in waited] == [(200, PENDING)] * 12


def a_run() -> int:
    with db.session() as s:
        run = StageRun(stage="ingest", subject="transcript:0", idem_key=f"ingest:0:{time.monotonic_ns()}")
        s.add(run)
        s.flush()
        return run.id


def test_a_wait_is_woken_when_its_run_ends_not_by_a_poll(monkeypatch):
    monkeypatch.setattr(waiting, "RECHECK_SECONDS", 60)  # only a notification can wake it in time
    run_id = a_run()
    checks: list[bool] = []

    def check(final: bool) -> dict | waiting.Watch:
        checks.append(final)
        with db.session() as s:
            status = s.get(StageRun, run_id).status
        return {"status": status} if status != PENDING or final else waiting.Watch(frozenset({run_id}))

    async def scenario() -> tuple[dict, float]:
        async with waiting.listening():
            await asyncio.sleep(0.5)  # the listener has connected
            task = asyncio.create_task(waiting.wait(waiting.Waiting(check, 30)))
            await asyncio.sleep(0.5)
            with db.session() as s:
                s.execute(text("UPDATE stage_runs SET status = 'succeeded' WHERE id = :id"), {"id": run_id})
            ended = time.monotonic()
            answer = await asyncio.wait_for(task, 10)
            return answer, time.monotonic() - ended

    answer, woken_after = asyncio.run(scenario())
    assert answer == {"status": SUCCEEDED} and checks == [False, False]
    assert woken_after < 5


@pytest.mark.parametrize("seconds", [0, 0.3])
def test_blocking_callers_get_the_answer_as_it_stands_when_the_time_is_up(seconds):
    run_id = a_run()

    def check(final: bool) -> dict | waiting.Watch:
        return {"final": final} if final else waiting.Watch(frozenset({run_id}))

    started = time.monotonic()
    assert waiting.block(waiting.Waiting(check, seconds)) == {"final": True}
    assert seconds <= time.monotonic() - started < seconds + 1
