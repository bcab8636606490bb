"""How a Loom process takes SIGINT and SIGTERM. Ctrl-C in a terminal reaches every process of
`loom up`'s group, and `loom up` then sends its children SIGTERM as well: once a process has begun
to stop, later stop signals are ignored. Ignored, not handled: while the interpreter finalises it
puts back the default action (death by the signal) of every signal a handler was set for, and a
late SIGTERM would end a clean stop with exit -15."""

import faulthandler
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
SUPERVISOR = "LOOM_SUPERVISOR_PID"  # `loom up` sets it for its children
PARENT_CHECK_SECONDS = 1.0
WAKE_SECONDS = 0.5
STACKS_SIGNAL = signal.SIGUSR1  # `kill -USR1 PID` prints where each thread of a Loom process is


def on_stop(handler: Callable[[], None]) -> None:
    """Call ``handler`` on the first SIGINT or SIGTERM, on a thread of its own; ignore every one
    after it. Not in the signal handler: Python runs that in the main thread between two of its
    bytecodes, and a handler taking a lock the main thread holds right then waits on itself for
    good. A Ctrl-C just as `loom worker` came up hung it so: its main thread was entering
    ``Event.wait``, which holds for a moment the lock that ``Event.set`` takes."""
    read, write = os.pipe()

    def call() -> None:
        os.read(read, 1)
        os.close(read)
        os.close(write)
        handler()

    threading.Thread(target=call, name="stop-signal", daemon=True).start()
    _on_first_signal(lambda: os.write(write, b"."))  # a system call: no lock taken


def until_stopped(stopped: threading.Event) -> None:
    """Wait in the main thread for ``stopped`` (set by an ``on_stop`` handler), looking up every
    ``WAKE_SECONDS``. A signal the kernel hands to another thread is run by Python in the main
    thread only once that thread runs Python code again: a main thread waiting without a timeout
    may never run it."""
    while not stopped.wait(WAKE_SECONDS):
        pass


def exit_on_stop() -> None:
    """Exit 0 on the first SIGINT or SIGTERM, raising SystemExit wherever the main thread is (as
    Ctrl-C raises KeyboardInterrupt): for a process with no stop of its own to run first."""
    _on_first_signal(lambda: sys.exit(0))


def _on_first_signal(act: Callable[[], object]) -> None:
    def first(*_) -> None:
        ignore_further()
        act()

    for sig in STOP_SIGNALS:
        signal.signal(sig, first)


def ignore_further() -> None:
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


def not_without_supervisor() -> None:
    """Under `loom up`, stop this process as SIGTERM would once `loom up` is gone, however it died:
    a SIGKILL or the OOM killer gives its children (each in a process group of its own) no
    signal, and they must not run on unsupervised, holding the API's port and database
    connections. Elsewhere (`loom worker` on a host of its own) nothing."""
    supervisor = os.environ.pop(SUPERVISOR, None)
    if supervisor is None:
        return

    def watch() -> None:
        while os.getppid() == int(supervisor):
            threading.Event().wait(PARENT_CHECK_SECONDS)
        log.warning("loom up (pid %s) is gone: stopping", supervisor)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="supervisor-watch", daemon=True).start()


def stacks_on_request() -> None:
    """Print every thread's stack to stderr on ``STACKS_SIGNAL``, at once and without the
    interpreter's help (faulthandler): how a process that does not stop shows what it waits on.
    `loom up` asks a child so before it kills it."""
    faulthandler.register(STACKS_SIGNAL, file=2, all_threads=True)  # fd 2: sys.stderr may have none
