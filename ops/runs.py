"""A stage run as the ops that start one answer it, and waiting a bounded time for its outcome."""

import time
from datetime import datetime
from typing import Any, Literal

from models import db
from models.stage_run import DONE, FAILED, StageRun
from ops.schemas import Answer
from workers import outbox

WAIT_POLL_SECONDS = 0.1


class RunAnswer(Answer):
    id: int
    stage: str
    status: Literal["pending", "running", "succeeded", "skipped", "failed"]
    reason: str | None
    last_error: str | None
    attempts: int
    result: dict[str, Any] | None
    created_at: datetime
    finished_at: datetime | None


def run_public(run: StageRun) -> dict:
    return {
        "id": run.id,
        "stage": run.stage,
        "status": run.status,
        "reason": run.reason,
        "last_error": run.last_error,
        "attempts": run.attempts,
        "result": run.result,
        "created_at": run.created_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
    }


def started(stage: str, run: StageRun, wait: bool, seconds: float) -> StageRun:
    """After the commit that wrote (or found) ``run``: wake its stage while it waits to be done and,
    with ``wait``, answer with it once it is done or after ``seconds``."""
    if run.status in DONE + (FAILED,):
        return run
    outbox.wake(stage, [run.id])
    return wait_for(run.id, seconds) if wait else run


def wait_for(run_id: int, seconds: float) -> StageRun:
    deadline = time.monotonic() + seconds
    while True:
        with db.session() as s:
            run = s.get(StageRun, run_id)
        if run.status in DONE + (FAILED,) or time.monotonic() > deadline:
            return run
        time.sleep(WAIT_POLL_SECONDS)
