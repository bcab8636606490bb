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


def worked_off(broker, timeout: float = 120, what: str = "the corpus to be embedded") -> None:
    """Every pending run done by a real worker started for it, then stopped: the queue emptied and
    each pending run sent again first (as the sweep would), so nothing waits for a sweep."""
    from workers import outbox
    from workers.runner import new_worker, stop  # registers every actor

    broker.flush_all()
    outbox.sweep(grace_seconds=-1)
    worker = new_worker(threads=2)
    worker.start()
    try:
        wait_until(settled, timeout=timeout, what=what)
    finally:
        stop(worker)
