"""Integration fixtures: the embedded PostgreSQL and Redis started once per test session, a fresh
database copied from the migrated template per test module, and real Dramatiq workers."""

import os
import re
import tempfile
from pathlib import Path

import psycopg
import pytest

# Before anything reads the settings: a private data directory, embedded servers, fast backoff.
HOME = Path(tempfile.mkdtemp(prefix="loom-test-"))
os.environ["LOOM_HOME"] = str(HOME)
for name in ("LOOM_DATABASE_URL", "LOOM_REDIS_URL", "LOOM_EMBED_PROVIDER", "LOOM_EMBED_BASE_URL"):
    os.environ.pop(name, None)
os.environ.update(
    LOOM_STAGE_MIN_BACKOFF_MS="20",
    LOOM_STAGE_MAX_BACKOFF_MS="100",
    LOOM_STAGE_MAX_ATTEMPTS="3",
    LOOM_METRICS_CACHE_SECONDS="0",  # each scrape sees what the test just did
    # The dashboard tests' site, and the Host TestClient and schemathesis send (as an operator lists
    # the names clients use).
    LOOM_ALLOWED_HOSTS="loom.test,testserver",
)

import services  # noqa: E402
from models import db  # noqa: E402
from models.settings import get_settings  # noqa: E402
from services import postgres  # noqa: E402
from tests.support.openai_server import FakeOpenAI  # noqa: E402
from tests.support.waits import wait_until  # noqa: E402
from workers import broker as broker_module  # noqa: E402

TEMPLATE = "loom"  # the embedded database, migrated by services.running()


# Started at collection, as a process starts: the servers, then this process's broker on them.
_running = services.running()
ENDPOINTS = _running.__enter__()
broker_module.setup(ENDPOINTS.redis_url)
# What the tests' own commands and subprocesses are configured with, as a user's shell would be.
os.environ.update(LOOM_DATABASE_URL=ENDPOINTS.database_url, LOOM_REDIS_URL=ENDPOINTS.redis_url)


def pytest_sessionfinish(session, exitstatus):
    _running.__exit__(None, None, None)


@pytest.fixture(scope="session")
def endpoints():
    return ENDPOINTS


def _admin_url() -> str:
    """The embedded server's superuser (Loom's processes connect as a role that makes no database),
    under the session's data directory whatever LOOM_HOME a test has set since."""
    return postgres.admin_url(HOME, "postgres").replace("+psycopg", "")


@pytest.fixture(scope="session")
def admin_url(endpoints) -> str:
    """A libpq URL of the embedded PostgreSQL's superuser: to make databases and tablespaces, as an
    operator would."""
    return _admin_url()


@pytest.fixture(scope="module", autouse=True)
def database(endpoints, request):
    """A database of this module's own, copied from the migrated template."""
    name = "t_" + re.sub(r"\W", "_", request.module.__name__.rsplit(".", 1)[-1])[:50]
    with psycopg.connect(_admin_url(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}" OWNER "{postgres.ROLE}"')
    url = endpoints.database_url.rsplit("/", 1)[0] + f"/{name}"
    # This process on the module's database, and the commands it runs in-process or starts (which
    # find their servers as a user's would: LOOM_DATABASE_URL) on it too.
    os.environ["LOOM_DATABASE_URL"] = url
    get_settings.cache_clear()
    db.configure(url)
    yield url
    db.configure(endpoints.database_url)
    os.environ["LOOM_DATABASE_URL"] = endpoints.database_url
    get_settings.cache_clear()
    with psycopg.connect(_admin_url(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def broker(endpoints):
    return broker_module.current()


@pytest.fixture
def worker(broker, database):
    """A real Dramatiq worker in this process, on a queue emptied first, with the broker known to
    answer (an earlier test's broker outage leaves wake-ups quiet for a second: see
    ``workers.broker.send``). Runs an earlier test of the module left pending lost their messages
    with the flush: they are sent again, as the sweep would, so waiting until the ledger is settled
    does not wait for a sweep that tests do not run."""
    from workers import outbox
    from workers.runner import new_worker, stop

    assert broker_module.answers()
    broker.flush_all()
    outbox.sweep(grace_seconds=-1)
    w = new_worker(threads=2)
    w.start()
    yield w
    stop(w, timeout_ms=10_000)
    broker.flush_all()


@pytest.fixture(scope="session")
def fake_openai():
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def openai_embedder(fake_openai, monkeypatch):
    """Point the embedder at the local OpenAI-compatible server (reset to a healthy state)."""
    from providers import embedders

    fake_openai.reset()
    monkeypatch.setenv("LOOM_EMBED_PROVIDER", "openai")
    monkeypatch.setenv("LOOM_EMBED_BASE_URL", fake_openai.base_url)
    get_settings.cache_clear()
    embedders.reset_embedder()
    yield fake_openai
    fake_openai.release.set()
    monkeypatch.undo()
    get_settings.cache_clear()
    embedders.reset_embedder()


@pytest.fixture
def llm(fake_openai, monkeypatch):
    """The LLM pointed at the local OpenAI-compatible server (healthy, 2 s timeout, one retry).
    Ends by checking the promise every LLM stage keeps: no prompt it sent holds text that
    screens as high."""
    from pipelines import screening
    from providers import llm as providers_llm

    fake_openai.reset()
    monkeypatch.setenv("LOOM_LLM_PROVIDER", "openai")
    monkeypatch.setenv("LOOM_LLM_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("LOOM_LLM_TIMEOUT_SECONDS", "2")
    monkeypatch.setenv("LOOM_LLM_MAX_RETRIES", "1")
    get_settings.cache_clear()
    providers_llm.reset_llm()
    yield fake_openai
    fake_openai.release.set()
    monkeypatch.undo()
    get_settings.cache_clear()
    providers_llm.reset_llm()
    sent = [message["content"] for messages in fake_openai.chat_calls for message in messages]
    assert not [text for text in sent if screening.is_high(text)], "a prompt held text that screens as high"


@pytest.fixture(scope="module")
def client(database):
    """The real ASGI app over the module's database."""
    from fastapi.testclient import TestClient

    from api.app import create_app

    with TestClient(create_app(warm_embedder=False), base_url="http://127.0.0.1") as client:
        yield client


@pytest.fixture(scope="module")
def make_token(database):
    from ops.caller import create_token

    def make(*namespaces: str, role: str = "admin", **bounds: str) -> dict:
        return {"Authorization": f"Bearer {create_token(list(namespaces), role, **bounds)}"}

    return make


@pytest.fixture
def loom_env(monkeypatch):
    """Set LOOM_* variables for one test: ``loom_env(LOOM_X="1")``; the settings read from them go
    with the test."""

    def set_(**values: str) -> None:
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()

    yield set_
    monkeypatch.undo()
    get_settings.cache_clear()


@pytest.fixture(scope="module")
def live_api(database):
    """The real app served over HTTP by uvicorn in a thread, for clients that are processes."""
    import threading

    import uvicorn

    from api.app import create_app
    from services.ports import free_port

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(warm_embedder=False), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started, timeout=30, what="uvicorn to start")
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)
