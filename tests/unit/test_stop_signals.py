"""A stop signal's handler runs apart from the code the signal interrupted. Python runs a signal
handler in the main thread between two of its bytecodes, so a handler taking a lock the main thread
holds at that moment waits on itself for good: `loom worker` hung so when Ctrl-C came just as it
entered ``Event.wait`` (the Event's lock, held for a few bytecodes there, is the one ``set`` takes)."""

import os
import signal
import subprocess
import sys
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


# The stop signal goes to a thread other than the main one (as the kernel may deliver a signal sent
# to the process): its handler is Python's to run in the main thread, which must look up to run it.
AIMED_AT_ANOTHER_THREAD = """
import signal, sys, threading, time
from services.stopping import on_stop, until_stopped

stopped = threading.Event()
on_stop(stopped.set)
bystander = threading.Thread(target=threading.Event().wait, args=(30,), daemon=True)
bystander.start()
threading.Timer(0.3, signal.pthread_kill, (bystander.ident, signal.SIGTERM)).start()
until_stopped(stopped)
print("stopped")
"""


def test_a_stop_signal_another_thread_took_still_stops_the_main_thread():
    began = time.monotonic()
    stopped = subprocess.run(
        [sys.executable, "-c", AIMED_AT_ANOTHER_THREAD], capture_output=True, text=True, timeout=20
    )
    assert stopped.stdout == "stopped\n", stopped.stderr
    assert time.monotonic() - began < 10


def test_a_process_asked_for_its_stacks_prints_every_thread_and_runs_on():
    """What `loom up` asks of a child that does not stop, before it kills it."""
    script = (
        "import os, threading\n"
        "from services.stopping import STACKS_SIGNAL, stacks_on_request\n"
        "stacks_on_request()\n"
        "waiting = threading.Event()\n"
        "def waiting_on_a_model(): waiting.set(); threading.Event().wait(30)\n"
        "threading.Thread(target=waiting_on_a_model, daemon=True).start()\n"
        "waiting.wait(10)\n"
        "os.kill(os.getpid(), STACKS_SIGNAL)\n"
        "print('ran on')\n"
    )
    asked = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=20)
    assert asked.returncode == 0 and asked.stdout == "ran on\n", asked.stderr
    assert "waiting_on_a_model" in asked.stderr and asked.stderr.count("hread 0x") == 2, asked.stderr
