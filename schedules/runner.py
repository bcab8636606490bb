"""``loom scheduler``: APScheduler firing the registry's passes until SIGINT/SIGTERM."""

import logging
import signal

from apscheduler.schedulers.blocking import BlockingScheduler

from schedules.registry import passes

log = logging.getLogger(__name__)


def run() -> None:
    scheduler = BlockingScheduler(timezone="UTC")
    for p in passes():
        # coalesce + one instance: a slow pass is never stacked on itself.
        scheduler.add_job(p.run, p.trigger, id=p.name, name=p.name, coalesce=True, max_instances=1)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: scheduler.shutdown(wait=False))
    log.info("scheduler up: %s", ", ".join(p.name for p in passes()))
    scheduler.start()
