"""How a Loom process takes SIGINT and SIGTERM. Ctrl-C in a terminal reaches every process of
`loom up`'s group, and `loom up` then sends its children SIGTERM as well: once a process has begun
to stop, later stop signals are ignored. Ignored, not handled: while the interpreter finalises it
puts back the default action (death by the signal) of every signal a handler was set for, and a
late SIGTERM would end a clean stop with exit -15."""

import logging
import os
import signal
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
SUPERVISOR = "LOOM_SUPERVISOR_PID"  # `loom up` sets it for its children
PARENT_CHECK_SECONDS = 1.0


def on_stop(handler: Callable[[], None]) -> None:
    """Call ``handler`` on the first SIGINT or SIGTERM; ignore every one after it."""

    def first(*_) -> None:
        ignore_further()
        handler()

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
