"""Runs recorded before stage runs kept a history show their last error as their one known attempt."""

import psycopg
import pytest

from models import migrate
from tests.integration.conftest import _admin_url

NAME = "t_run_history_before"


@pytest.fixture()
def at_0035(endpoints):
    with psycopg.connect(_admin_url(endpoints), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{NAME}"')
    url = endpoints.database_url.rsplit("/", 1)[0] + f"/{NAME}"
    migrate.upgrade(url, "0035")
    yield url
    with psycopg.connect(_admin_url(endpoints), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{NAME}" WITH (FORCE)')


def test_an_earlier_runs_last_error_becomes_its_one_known_attempt(at_0035):
    plain = at_0035.replace("+psycopg", "")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO stage_runs (stage, subject, idem_key, status, attempts, last_error, params, "
            "created_at, updated_at, available_at) VALUES "
            "('embedding', 'turn:1', 'k1', 'failed', 3, 'TimeoutError: slow', '{}', now(), "
            "'2026-11-30 10:00:00+00', now()), "
            "('embedding', 'turn:2', 'k2', 'succeeded', 1, NULL, '{}', now(), now(), now())"
        )
    migrate.upgrade(at_0035)
    with psycopg.connect(plain) as conn:
        rows = dict(conn.execute("SELECT idem_key, history FROM stage_runs").fetchall())
    assert rows["k2"] == []
    [attempt] = rows["k1"]
    assert (attempt["attempt"], attempt["error"]) == (3, "TimeoutError: slow")
    assert attempt["at"].startswith("2026-11-30")
