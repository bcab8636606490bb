"""``loom status``: the services, the queues, failed runs and the oldest pending run at a glance;
a non-zero exit when something is down. It starts nothing."""

import socket
import time

import pytest
from sqlalchemy import text
from sqlmodel import func, select
from typer.testing import CliRunner

from cli import app
from models import db
from models.settings import get_settings
from models.stage_run import FAILED, PENDING, StageRun
from services.ports import free_port, is_listening
from tests.support.calls import append, enable_logging
from tests.support.rows import embedding_subject

runner = CliRunner()


@pytest.fixture
def settings(monkeypatch, live_api):
    """Set LOOM_* variables for one test; LOOM_HOST/LOOM_PORT start at the live API."""

    def change(**environment: str | None) -> None:
        for name, value in environment.items():
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, value)
        get_settings.cache_clear()

    host, port = live_api.removeprefix("http://").split(":")
    change(LOOM_HOST=host, LOOM_PORT=port)
    yield change
    monkeypatch.undo()
    get_settings.cache_clear()


def status():
    return runner.invoke(app, ["status"])


def line(output: str, first_word: str) -> str:
    (found,) = [row for row in output.splitlines() if row.split() and row.split()[0] == first_word]
    return found


def count(status: str) -> int:
    with db.session() as s:
        return s.exec(
            select(func.count()).where(StageRun.stage == "embedding", StageRun.status == status)
        ).one()


def test_status_shows_every_service_up_and_exits_0(settings):
    result = status()
    assert result.exit_code == 0, result.output
    for service in ("database", "broker", "api"):
        assert line(result.stdout, service).split()[1] == "up"
    assert "down" not in result.stdout


def test_status_shows_pending_and_failed_runs_and_how_long_the_oldest_has_waited(settings, broker):
    broker.flush_all()
    enable_logging("status")
    ids = [append("status", "t", f"status turn {i}")["turn_id"] for i in range(3)]
    with db.session() as s:
        for statement, subject in (
            ("UPDATE stage_runs SET available_at = now() - interval '150 seconds'", ids[0]),
            ("UPDATE stage_runs SET status = 'failed'", ids[-1]),
        ):
            s.exec(
                text(f"{statement} WHERE subject = :subject"), params={"subject": embedding_subject(subject)}
            )
    result = status()
    assert result.exit_code == 0, result.output
    cells = line(result.stdout, "embedding").replace("│", " ").split()
    # stage, pending, running, failed, oldest pending (2m 30s), then the queue: ready, delayed, dead
    assert cells[:4] == ["embedding", str(count(PENDING)), "0", str(count(FAILED))]
    assert count(PENDING) >= 2 and count(FAILED) >= 1
    minutes, seconds = cells[4:6]  # e.g. "2m 30s", however long the snapshot took to come
    assert minutes == "2m" and 30 <= int(seconds.removesuffix("s")) < 60
    assert cells[6:] == ["1", "0", "0"]
    broker.flush_all()


def test_status_exits_non_zero_when_the_broker_is_unreachable(settings):
    closed = free_port()
    settings(LOOM_REDIS_URL=f"redis://127.0.0.1:{closed}/0")
    result = status()
    assert result.exit_code == 1
    assert line(result.stdout, "broker").split()[1] == "down"
    assert "refused" in line(result.stdout, "broker").lower()
    assert line(result.stdout, "database").split()[1] == "up"


def test_status_exits_non_zero_when_the_api_does_not_answer(settings):
    settings(LOOM_PORT=str(free_port()))
    result = status()
    assert result.exit_code == 1
    assert line(result.stdout, "api").split()[1] == "down"


def test_a_database_that_never_answers_does_not_hang_status(settings):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        port = listener.getsockname()[1]
        settings(LOOM_DATABASE_URL=f"postgresql+psycopg://postgres@127.0.0.1:{port}/loom")
        started = time.monotonic()
        result = status()
        assert time.monotonic() - started < 7
    assert result.exit_code == 1
    assert line(result.stdout, "database").split()[1] == "down"
    assert line(result.stdout, "broker").split()[1] == "up"


def test_status_starts_no_embedded_server(settings, tmp_path):
    settings(LOOM_HOME=str(tmp_path), LOOM_DATABASE_URL=None, LOOM_REDIS_URL=None)
    result = status()
    assert result.exit_code == 1
    assert line(result.stdout, "database").split()[1] == "down"
    assert line(result.stdout, "broker").split()[1] == "down"
    from services import postgres, redis

    for url in (postgres.url(tmp_path), redis.url(tmp_path)):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert not is_listening(port), url
    assert not (tmp_path / "postgres").exists() and not (tmp_path / "redis").exists()


def test_with_loom_down_status_says_so_in_one_line_a_part(settings, tmp_path):
    settings(LOOM_HOME=str(tmp_path), LOOM_DATABASE_URL=None, LOOM_REDIS_URL=None, LOOM_PORT=str(free_port()))
    result = runner.invoke(app, ["status"], terminal_width=80)
    assert result.exit_code == 1
    said = result.output.splitlines()
    assert [row.split()[:2] for row in said[:3]] == [
        ["database", "down"],
        ["broker", "down"],
        ["api", "down"],
    ]
    assert "refused" in said[0].lower() and "sqlalche.me" not in result.output
    # Nothing of the stages can be read: one line says so, not a table of question marks.
    assert said[3:] == ["stages: unknown while the database and the broker are down"], result.output
