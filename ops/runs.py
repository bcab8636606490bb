"""A stage run as the ops that start one answer it, and waiting a bounded time for its outcome."""

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from models import db
from models.stage_run import DONE, FAILED, StageRun
from ops.schemas import Answer, Moment
from ops.waiting import Waiting, Watch
from workers import outbox


class RunAnswer(Answer):
    id: int
    stage: str
    status: Literal["pending", "running", "succeeded", "skipped", "failed"]
    reason: str | None
    last_error: str | None
    attempts: int
    result: dict[str, Any] | None
    created_at: Moment
    finished_at: Moment | None


def run_public(run: StageRun) -> RunAnswer:
    return RunAnswer(
        id=run.id,
        stage=run.stage,
        status=run.status,
        reason=run.reason,
        last_error=run.last_error,
        attempts=run.attempts,
        result=run.result,
        created_at=run.created_at,
        finished_at=run.finished_at,
    )


A = TypeVar("A", bound=Answer)


def started(
    stage: str, run: StageRun, wait: bool, seconds: float, answer: Callable[[StageRun], A]
) -> A | Waiting:
    """After the commit that wrote (or found) ``run``: wake its stage while it waits to be done,
    and answer (``answer`` of the run) at once or, with ``wait``, once it is done or after
    ``seconds``."""
    if run.status in DONE + (FAILED,):
        return answer(run)
    outbox.wake(stage, [run.id])
    if not wait:
        return answer(run)

    def check(final: bool) -> A | Watch:
        with db.session() as s:
            now = s.get(StageRun, run.id)
        return answer(now) if final or now.status in DONE + (FAILED,) else Watch(frozenset({run.id}))

    return Waiting(check, seconds)
