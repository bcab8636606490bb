"""Where a Loom process's log goes. Everything from INFO up is kept in ``LOOM_HOME/logs/<process>.log``
(rotated); the console shows what a person watching it needs: warnings, errors, and the lines
marked ``SHOWN`` (a process up, Loom ready). ``LOOM_LOG_LEVEL`` (or ``--verbose``, which is INFO)
sets the console's level instead, and the file's too when it is lower than INFO. The console is
standard error, as Python's logging has it; a banner printed to standard output goes beside it.
A process with no file to keep its log (no data directory: a worker host on external servers, or
one it cannot write) shows INFO on the console, where its supervisor (systemd, a container) keeps it.

One writer per file: a second process of a kind in one data directory (two `loom worker`s on one
host) writes ``<process>-<pid>.log``, as two rotating writers of a file would rename it under each
other. Each holds a lock beside its file (``.<name>.lock``) while it lives.

A first `loom up` logs some 150 lines of migrations and model building, and the scheduler two
lines a second: kept in the file, they buried the banner on the console."""

import fcntl
import logging
import logging.handlers
import os
import sys
from pathlib import Path

from models.settings import get_settings

SHOWN = {"shown": True}  # ``log.info(..., extra=SHOWN)``: on the console at the default level too
CONSOLE_DEFAULT = logging.WARNING
FILE_LEVEL = logging.INFO
FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"
CONSOLE_FORMAT, CONSOLE_TIME = "%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"
FILE_BYTES = 10 * 1024 * 1024
FILE_BACKUPS = 3
# Two lines per run of a pass (the sweep's is every second): kept back unless DEBUG is asked.
CHATTY = ("apscheduler.executors",)
VERBOSE_ENV = "LOOM_LOG_LEVEL"


class _ShownOrAbove(logging.Filter):
    def __init__(self, level: int) -> None:
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= self.level or getattr(record, "shown", False)


def _asked() -> int | None:
    asked = get_settings().log_level
    return None if asked is None else logging.getLevelNamesMapping()[asked]


def verbose() -> None:
    """``--verbose``: INFO on the console, for this process and the ones it starts (DEBUG, when
    ``LOOM_LOG_LEVEL`` asks for it, stays)."""
    asked = _asked()
    if asked is None or asked > logging.INFO:
        os.environ[VERBOSE_ENV] = "INFO"
        get_settings.cache_clear()


def folder() -> Path:
    return get_settings().home / "logs"


def setup(process: str, make_home: bool = False) -> None:
    """Send this process's log to its file and the console, in place of this module's setup
    before. The file only in a data directory that exists, unless ``make_home`` (`loom up`, the one
    command that makes it): a `loom worker` without one is refused, having made nothing."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, "loom", False)]:
        root.removeHandler(handler)
        handler.close()
    to_file: logging.Handler | None = None
    unwritable: OSError | None = None
    if make_home or get_settings().home.is_dir():
        try:
            to_file = _to_file(process)
        except OSError as exc:  # a read-only or full disk: the process runs, its log on the console
            unwritable = exc
    asked = _asked()
    console = asked if asked is not None else CONSOLE_DEFAULT if to_file else FILE_LEVEL
    to_console = logging.StreamHandler(sys.stderr)
    to_console.setFormatter(logging.Formatter(CONSOLE_FORMAT, CONSOLE_TIME))
    to_console.addFilter(_ShownOrAbove(console))
    for handler in [to_console] if to_file is None else [to_file, to_console]:
        handler.loom = True  # type: ignore[attr-defined]  # this module's, replaced by the next setup
        root.addHandler(handler)
    root.setLevel(min(FILE_LEVEL, console))
    for name in CHATTY:
        logging.getLogger(name).setLevel(logging.NOTSET if console <= logging.DEBUG else logging.WARNING)
    if unwritable is not None:
        logging.getLogger(__name__).warning("no log file (%s): the log is on the console", unwritable)


# The log file this process writes for each process kind and folder: a setup again (a test's, or a
# process's after its first) keeps the same file. Its lock's descriptor stays open while the
# process lives.
_held: dict[Path, Path] = {}


def _to_file(process: str) -> logging.Handler:
    """The rotating handler of the file this process may write."""
    if (kind := folder() / process) not in _held:
        _held[kind] = _claim(process)
    handler = logging.handlers.RotatingFileHandler(_held[kind], maxBytes=FILE_BYTES, backupCount=FILE_BACKUPS)
    handler.setFormatter(logging.Formatter(FORMAT))
    return handler


def _claim(process: str) -> Path:
    """``<process>.log`` when no live process holds it, else this process's own."""
    folder().mkdir(parents=True, exist_ok=True)
    for name in (process, f"{process}-{os.getpid()}"):
        fd = os.open(folder() / f".{name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return folder() / f"{name}.log"
    raise OSError(f"{folder()}: the lock of this process's own log file is held")
