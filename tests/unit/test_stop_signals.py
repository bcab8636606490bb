"""A stop signal's handler runs apart from the code the signal interrupted. Python runs a signal
handler in the main thread between two of its bytecodes, so a handler taking a lock the main thread
holds at that moment waits on itself for good: `loom worker` hung so when Ctrl-C came just as it
entered ``Event.wait`` (the Event's lock, held for a few bytecodes there, is the one ``set`` takes)."""

import os
import signal
import threading
import time

import pytest

from services.stopping import STOP_SIGNALS, on_stop


@pytest.fixture
def restored_signals():
    before = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    yield
    for sig, handler in before.items():
        signal.signal(sig, handler)


@pytest.mark.parametrize("sig", STOP_SIGNALS, ids=lambda s: s.name)
def test_a_stop_handler_taking_a_lock_the_interrupted_thread_holds_still_runs(restored_signals, sig):
    lock = threading.Lock()
    ran = threading.Event()

    def handler() -> None:
        if lock.acquire(timeout=2):  # in the interrupted thread this could never succeed
            lock.release()
            ran.set()

    on_stop(handler)
    with lock:
        os.kill(os.getpid(), sig)
        time.sleep(0.3)  # the signal is handled here, while this thread holds the lock
    assert ran.wait(5), "the handler could not take the lock the interrupted thread held"


def test_only_the_first_stop_signal_calls_the_handler(restored_signals):
    calls = []
    on_stop(lambda: calls.append(1))
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGINT):
        os.kill(os.getpid(), sig)
        time.sleep(0.05)
    time.sleep(0.2)
    assert calls == [1]


def test_the_scheduler_stopped_before_it_runs_stops(restored_signals, monkeypatch):
    """A stop signal while the passes are being scheduled: the scheduler is not running yet."""
    from schedules import runner

    monkeypatch.setattr(runner, "schedule", lambda scheduler: os.kill(os.getpid(), signal.SIGTERM))
    began = time.monotonic()
    runner.run()  # returns: never runs on unstopped
    assert time.monotonic() - began < 5
