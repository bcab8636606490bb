"""`loom passes`: every periodic pass listed with its trigger and last firing, and any of them fired
by hand, enqueuing what it would on its schedule (with --wait, until those runs are done)."""

import pytest
from freezegun import freeze_time
from typer.testing import CliRunner

from cli import app
from models.settings import get_settings
from ops.caller import OPERATOR
from ops.registry import call
from tests.support.calls import append, enable_logging

runner = CliRunner()


def loom(*args: str):
    return runner.invoke(app, list(args))


def row(listing: str, name: str) -> str:
    return next(line for line in listing.splitlines() if line.split(maxsplit=1)[:1] == [name])


@pytest.fixture
def weekday_nights(monkeypatch):
    monkeypatch.setenv("LOOM_NIGHT_WEAVING_CRON", "30 2 * * 1-5")
    get_settings.cache_clear()
    yield
    monkeypatch.delenv("LOOM_NIGHT_WEAVING_CRON")
    get_settings.cache_clear()


def test_every_pass_is_listed_with_its_trigger_as_people_write_it_and_its_next_run(weekday_nights):
    with freeze_time("2026-12-04 10:00:00"):  # a Friday: the next weekday 02:30 is Monday's
        result = runner.invoke(app, ["passes", "list"], env={"COLUMNS": "200"})  # every column
    assert result.exit_code == 0, result.output
    assert "every 10 s" in row(result.stdout, "sweep") and "every 5 min" in row(result.stdout, "titler")
    assert "every 1 h" in row(result.stdout, "retention")
    night = row(result.stdout, "night_weaving")
    assert "30 2 * * 1-5" in night and "2026-12-07T02:30:00" in night and "cron[" not in result.stdout
    listed = {p["name"]: p for p in call("passes.list", OPERATOR, {})["passes"]}
    assert listed["night_weaving"]["trigger"] == "30 2 * * 1-5 (UTC)"
    assert listed["night_weaving"]["next_at"].startswith("2026-12-07T02:30:00")


def test_a_pass_fired_by_hand_sends_its_runs_waits_for_them_and_is_recorded(llm, worker):
    enable_logging("passes")
    for content in ("where do the nightly backups go", "to the cold bucket", "for how long", "ninety days"):
        append("passes", "by-hand", content)
    result = loom("passes", "run", "titler", "--wait")
    assert result.exit_code == 0, result.output
    assert "titler: sent 1 runs" in result.stdout and "1 succeeded" in result.stdout
    listed = row(loom("passes", "list").stdout, "titler")
    assert "operator" in listed and " 1 " in listed
    again = loom("passes", "run", "titler")
    assert again.exit_code == 0 and "titler: sent 0 runs" in again.stdout  # nothing left to title


def test_an_unknown_pass_is_one_line_and_a_non_zero_exit():
    result = loom("passes", "run", "nightly-typo")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip().count("\n") == 0 and "the pass must be one of" in result.stderr
