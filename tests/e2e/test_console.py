"""What a person sees in the terminal of a first `loom up`: the banner, a line per process up, and
a last line saying Loom is ready, then nothing until something needs them; the migrations, the
model's building and every pass's run are in the log files under LOOM_HOME. ``--verbose`` brings
them back to the console, for `loom up`'s children too."""

import os
import re
import signal
import time

import pytest

from tests.e2e.conftest import wait_for

pytestmark = pytest.mark.e2e

READY = "Ready on http://"
QUIET_SECONDS = 12  # past the scheduler's 10 s tick; the sweep runs every second here


def test_a_first_loom_up_shows_its_banner_then_keeps_quiet(loom):
    loom.up()
    wait_for(lambda: READY in loom.printed(), 60, "the ready line")
    before, ready = loom.printed().split(READY)
    lines = before.splitlines()
    assert len(lines) <= 25, before
    # Each line whole, though a log or a pipe is no terminal 80 columns wide: a command copied
    # from it runs.
    assert any(
        re.fullmatch(r"Get a token: \S*loom tokens create .+ \[--recording\]", line) for line in lines
    ), before
    for process in ("worker up (pid", "scheduler up (pid", "API up (pid"):
        assert process in loom.printed()
    assert str(loom.home / "logs") in ready and "Ctrl-C" in ready
    shown = loom.printed()
    time.sleep(QUIET_SECONDS)
    assert loom.printed() == shown, loom.printed()[len(shown) :]

    # Nothing of it was lost: it went to the files.
    assert "Running upgrade" in loom.logged("up")  # the migrations of a new data directory
    assert "Scheduler started" in loom.logged("scheduler")
    assert "Application startup complete" in loom.logged("api")  # uvicorn's own lines
    assert "worker up" in loom.logged("worker")

    # Asked for its threads' stacks, as it asks a child that does not stop, `loom up` prints them
    # and runs on.
    os.kill(loom.proc.pid, signal.SIGUSR1)
    wait_for(lambda: "services/supervisor.py" in loom.printed(), 10, "the stacks (faulthandler's)")
    assert loom.proc.poll() is None and loom.healthy()

    assert loom.stop() == 0
    assert loom.printed().rstrip().endswith("stopped")


def test_verbose_shows_every_process_log_on_the_console(loom):
    loom.up("--verbose")
    wait_for(lambda: READY in loom.printed(), 60, "the ready line")
    wait_for(lambda: "Application startup complete" in loom.printed(), 30, "the API's INFO lines")
    assert "Running upgrade" in loom.printed() and "Scheduler started" in loom.printed()
    assert loom.stop() == 0
