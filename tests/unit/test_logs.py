"""A Loom process's log: all of it from INFO up in its file under LOOM_HOME, and on the console only
what a person watching needs (warnings, errors, a line per process up) unless asked for more."""

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from models.settings import get_settings
from services import logs

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path, monkeypatch, logging_restored):
    monkeypatch.setenv("LOOM_HOME", str(tmp_path))
    monkeypatch.delenv("LOOM_LOG_LEVEL", raising=False)
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()


def said(process_log: logging.Logger) -> None:
    process_log.debug("a detail")
    process_log.info("migrations ran")
    process_log.info("worker up", extra=logs.SHOWN)
    process_log.warning("Redis is not running; starting it again")
    logging.getLogger("apscheduler.executors.default").info('Job "sweep" executed successfully')


def test_the_console_shows_warnings_and_the_lines_marked_shown_the_file_keeps_info(home, capsys):
    logs.setup("worker")
    said(logging.getLogger("workers.runner"))
    console = capsys.readouterr().err
    assert "worker up" in console and "starting it again" in console
    assert "migrations ran" not in console and "a detail" not in console and "sweep" not in console
    kept = (home / "logs" / "worker.log").read_text()
    assert "migrations ran" in kept and "worker up" in kept and "starting it again" in kept
    assert "a detail" not in kept and "sweep" not in kept  # a pass's every run: not even in the file


@pytest.mark.parametrize("asked", ["debug", "DEBUG"])
def test_loom_log_level_brings_the_rest_to_the_console(home, capsys, monkeypatch, asked):
    monkeypatch.setenv("LOOM_LOG_LEVEL", asked)
    get_settings.cache_clear()
    logs.setup("scheduler")
    said(logging.getLogger("schedules.runner"))
    console = capsys.readouterr().err
    for line in ("a detail", "migrations ran", "worker up", "starting it again", "sweep"):
        assert line in console
    assert "a detail" in (home / "logs" / "scheduler.log").read_text()


def test_verbose_leaves_a_lower_level_asked_for(home, monkeypatch):
    monkeypatch.setenv("LOOM_LOG_LEVEL", "DEBUG")
    get_settings.cache_clear()
    logs.verbose()
    assert get_settings().log_level == "DEBUG"


def test_verbose_is_info_for_this_process_and_those_it_starts(home, capsys, monkeypatch):
    monkeypatch.setenv("LOOM_LOG_LEVEL", "ERROR")  # restored by monkeypatch after the test
    logs.verbose()
    assert get_settings().log_level == "INFO"
    logs.setup("up")
    said(logging.getLogger("services.supervisor"))
    console = capsys.readouterr().err
    assert "migrations ran" in console and "a detail" not in console and "sweep" not in console


def test_a_second_setup_replaces_the_first(home, capsys):
    logs.setup("up")
    logs.setup("up")
    logging.getLogger("services.supervisor").warning("once")
    assert capsys.readouterr().err.count("once") == 1


def test_no_data_directory_is_made_but_by_loom_up(home, capsys):
    """A `loom worker` without one is refused having made nothing; `loom up` makes it."""
    elsewhere = home / "nowhere"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LOOM_HOME", str(elsewhere))
        get_settings.cache_clear()
        logs.setup("worker")
        logging.getLogger("workers.runner").warning("on the console alone")
        assert not elsewhere.exists() and "on the console alone" in capsys.readouterr().err
        logs.setup("up", make_home=True)
        logging.getLogger("services.supervisor").info("kept")
        assert "kept" in (elsewhere / "logs" / "up.log").read_text()


def test_a_process_with_no_file_for_its_log_shows_info_on_the_console(home, capsys):
    """A worker host on external servers has no data directory: its supervisor (systemd, a
    container) keeps what the console shows, so nothing from INFO up is lost."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LOOM_HOME", str(home / "nowhere"))
        get_settings.cache_clear()
        logs.setup("worker")
        said(logging.getLogger("workers.runner"))
    console = capsys.readouterr().err
    assert "migrations ran" in console and "worker up" in console and "a detail" not in console


def test_a_log_folder_that_cannot_be_written_is_said_once_and_the_console_keeps_info(home, capsys):
    (home / "logs").write_text("a file where the folder would be")
    logs.setup("up", make_home=True)
    said(logging.getLogger("services.supervisor"))
    console = capsys.readouterr().err
    assert console.count("no log file") == 1 and "migrations ran" in console


def test_a_second_process_of_a_kind_writes_its_own_file(home, capsys):
    """Two rotating writers of one file would rename it under each other."""
    first = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from services import logs; logs.setup('worker'); print('set', flush=True); input()",
        ],
        cwd=ROOT,
        env={**os.environ, "LOOM_HOME": str(home)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert first.stdout.readline() == "set\n"
        logs.setup("worker")
        logging.getLogger("workers.runner").info("the second worker")
    finally:
        first.communicate("\n", timeout=30)
    assert "the second worker" in (home / "logs" / f"worker-{os.getpid()}.log").read_text()
    assert "the second worker" not in (home / "logs" / "worker.log").read_text()
    logs.setup("worker")  # the first has stopped, but this process keeps the file it was given
    logging.getLogger("workers.runner").info("again")
    assert "again" in (home / "logs" / f"worker-{os.getpid()}.log").read_text()
