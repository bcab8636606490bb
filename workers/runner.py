"""``loom worker``: a Dramatiq worker in this process, until SIGINT/SIGTERM; then its runs in
flight finish within the grace, or are handed back without spending an attempt."""

import logging
import os
import threading

import dramatiq

from models.settings import get_settings
from providers.embedders import load_in_background, settle
from services.logs import SHOWN
from services.stopping import on_stop, until_stopped
from workers import broker, ledger, stages

log = logging.getLogger(__name__)

# How often an idle worker's threads look up from waiting: to see whether it is stopping, and to
# pass on delayed messages that fell due. Redis is fetched from when rung (workers.doorbell).
POLL_MS = 100


def new_worker(threads: int) -> dramatiq.Worker:
    """A worker on every stage's queue (on the broker this process set up), not yet started."""
    broker.declare_all()
    ledger.start_claiming()
    return dramatiq.Worker(broker.current(), worker_threads=threads, worker_timeout=POLL_MS)


def stop(worker: dramatiq.Worker, timeout_ms: int = 30_000) -> None:
    """Stop a worker and detach it from the broker. Dramatiq leaves a stopped worker's middleware
    on the broker, and that middleware starts consumers for any queue declared later: they would
    fetch the new queue's messages and never run them (a process that starts workers again, as the
    tests do)."""
    worker.stop(timeout=timeout_ms)
    middleware = worker.broker.middleware
    middleware[:] = [m for m in middleware if getattr(m, "worker", None) is not worker]


def run(threads: int) -> None:
    worker = new_worker(threads)
    stopping = threading.Event()
    on_stop(stopping.set)
    loading = load_in_background()  # ready before the first batch arrives
    worker.start()
    log.info(
        "worker up (pid %d): %d threads on %d stages",
        os.getpid(),
        threads,
        len(stages.all_stages()),
        extra=SHOWN,
    )
    until_stopped(stopping)
    drain(worker)
    settle(loading)
    if any(thread.is_alive() for thread in worker.workers):
        # A thread still waits on a model for a run handed back: nothing of it is needed, and an
        # interpreter finalising under it may print noise.
        logging.shutdown()
        os._exit(0)


def drain(worker: dramatiq.Worker) -> None:
    """Stop with nothing lost and no attempt spent: claim nothing more, let the runs in flight
    finish within the grace, hand back the rest, and wake their stages for the next worker."""
    ledger.stop_claiming()
    stop(worker, timeout_ms=get_settings().worker_stop_grace_seconds * 1000)
    for name in sorted(ledger.hand_back()):
        broker.send(stages.get(name), [])
    log.info("worker stopped")
