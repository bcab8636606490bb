"""``loom scheduler``: APScheduler firing the registry's passes until SIGINT/SIGTERM."""

import logging
import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import BaseScheduler

from models import db
from schedules.record import PassBusy, fire
from schedules.registry import Pass, passes
from services.logs import SHOWN
from services.stopping import on_stop, until_stopped

log = logging.getLogger(__name__)


def guarded(p: Pass) -> Callable[[], None]:
    """The pass, with an unreachable database logged in one line (the next firing tries
    again) instead of a traceback every few seconds for as long as the outage lasts."""

    def run_pass() -> None:
        try:
            fire(p, by="scheduler")
        except PassBusy:
            log.info("%s skipped: an operator's firing of it is under way", p.name)
        except Exception as exc:
            if not db.unavailable(exc):
                raise
            log.warning("%s skipped, the database is unavailable: %s", p.name, exc.__class__.__name__)

    return run_pass


def schedule(scheduler: BaseScheduler) -> None:
    """Add every pass as a job; a pass marked ``at_start`` fires at once as well."""
    for p in passes().values():
        first = {"next_run_time": datetime.now(UTC)} if p.at_start else {}
        # coalesce + one instance: a slow pass is never stacked on itself.
        scheduler.add_job(
            guarded(p), p.trigger, id=p.name, name=p.name, coalesce=True, max_instances=1, **first
        )


def run() -> None:
    """Fire the passes until the first stop signal, whenever it comes: before the scheduler runs
    too (shut down from the signal, a scheduler not yet running refuses, then runs on)."""
    stopping = threading.Event()
    on_stop(stopping.set)
    scheduler = BackgroundScheduler(timezone="UTC")
    schedule(scheduler)
    scheduler.start()
    log.info("scheduler up (pid %d): %s", os.getpid(), ", ".join(passes()), extra=SHOWN)
    until_stopped(stopping)
    scheduler.shutdown(wait=False)
