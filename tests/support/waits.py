"""Waiting on the real system: a condition polled until it holds, and the stage ledger settled."""

import time
from collections.abc import Callable

from models import db


def wait_until(predicate: Callable[[], bool], timeout: float = 60, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def settled() -> bool:
    """No stage run left pending or running."""
    from sqlmodel import col, func, select

    from models.stage_run import PENDING, RUNNING, StageRun

    with db.session() as s:
        return not s.exec(select(func.count()).where(col(StageRun.status).in_([PENDING, RUNNING]))).one()
