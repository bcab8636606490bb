"""How a Loom process takes SIGINT and SIGTERM. Ctrl-C in a terminal reaches every process of
`loom up`'s group, and `loom up` then sends its children SIGTERM as well: once a process has begun
to stop, later stop signals are ignored. Ignored, not handled: while the interpreter finalises it
puts back the default action (death by the signal) of every signal a handler was set for, and a
late SIGTERM would end a clean stop with exit -15."""

import signal
from collections.abc import Callable

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


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
