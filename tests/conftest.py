"""What every test process starts from."""

import logging
import os

import pytest

# pytest-xdist's workers (make test spreads the files over them) start with COLUMNS=80 set, which a
# user's shell seldom exports: the CLI's consoles, built at import, would keep that width for good,
# and the tests of the CLI's widths set their own.
os.environ.pop("COLUMNS", None)


@pytest.fixture
def logging_restored():
    """The root logger as it was, and the loggers kept quiet, after a test that ran a process's
    logging setup (services.logs)."""
    from services import logs

    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    chatty = {name: logging.getLogger(name).level for name in logs.CHATTY}
    yield
    for handler in root.handlers[:]:
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)
    for name, was in chatty.items():
        logging.getLogger(name).setLevel(was)
