"""``loom worker``: a Dramatiq worker in this process, until SIGINT/SIGTERM."""

import logging
import signal
import threading

import dramatiq

from workers.broker import broker
from workers.outbox import ACTORS

log = logging.getLogger(__name__)


def run(threads: int) -> None:
    worker = dramatiq.Worker(broker, worker_threads=threads)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    worker.start()
    log.info("worker up: %d threads on queues %s", threads, sorted(ACTORS))
    stop.wait()
    worker.stop(timeout=30_000)
