"""Where a Loom process's log goes. Everything from INFO up is kept in ``LOOM_HOME/logs/<process>.log``
(rotated); the console shows what a person watching it needs: warnings, errors, and the lines
marked ``SHOWN`` (a process up, Loom ready). ``LOOM_LOG_LEVEL`` (or ``--verbose``, which is INFO)
sets the console's level instead, and the file's too when it is lower than INFO. The console is
standard error, as Python's logging has it; a banner printed to standard output goes beside it.

A first `loom up` logs some 150 lines of migrations and model building, and the scheduler two
lines a second: kept in the file, they buried the banner on the console."""

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


def console_level() -> int:
    asked = get_settings().log_level
    return CONSOLE_DEFAULT if asked is None else logging.getLevelNamesMapping()[asked]


def verbose() -> None:
    """``--verbose``: INFO on the console, for this process and the ones it starts."""
    os.environ[VERBOSE_ENV] = "INFO"
    get_settings.cache_clear()


def folder() -> Path:
    return get_settings().home / "logs"


def setup(process: str, make_home: bool = False) -> None:
    """Send this process's log to ``<process>.log`` and the console, in place of this module's
    setup before. The file only in a data directory that exists, unless ``make_home`` (`loom up`,
    the one command that makes it): a `loom worker` without one is refused, having made nothing."""
    console = console_level()
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, "loom", False)]:
        root.removeHandler(handler)
        handler.close()
    handlers: list[logging.Handler] = []
    if make_home or get_settings().home.is_dir():
        folder().mkdir(parents=True, exist_ok=True)
        to_file = logging.handlers.RotatingFileHandler(
            folder() / f"{process}.log", maxBytes=FILE_BYTES, backupCount=FILE_BACKUPS
        )
        to_file.setFormatter(logging.Formatter(FORMAT))
        handlers.append(to_file)
    to_console = logging.StreamHandler(sys.stderr)
    to_console.setFormatter(logging.Formatter(CONSOLE_FORMAT, CONSOLE_TIME))
    to_console.addFilter(_ShownOrAbove(console))
    handlers.append(to_console)
    for handler in handlers:
        handler.loom = True  # type: ignore[attr-defined]  # this module's, replaced by the next setup
        root.addHandler(handler)
    root.setLevel(min(FILE_LEVEL, console))
    for name in CHATTY:
        logging.getLogger(name).setLevel(logging.NOTSET if console <= logging.DEBUG else logging.WARNING)
