"""What operators see over HTTP: ``GET /metrics`` (Prometheus text) and ``GET /healthz``, which
answers its status to anyone and its per-check details only to an admin token."""

import socket
import time
from typing import get_args

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text
from sqlmodel import func, select

from models import db
from models.settings import get_settings
from models.stage_run import STATUSES, StageRun
from ops.turns import AppendAnswer
from services.ports import free_port
from tests.support.calls import append, enable_logging
from tests.support.rows import embedding_subject
from tests.support.waits import settled, wait_until


def scrape(client) -> dict[tuple[str, tuple], float]:
    """Every sample of ``GET /metrics``, by (name, sorted labels)."""
    answer = client.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


OUTCOMES = ("stored", "duplicate", "logging_disabled", "rejected", "error")


def appends(samples, outcome: str) -> float:
    return samples.get(("loom_appends_total", (("outcome", outcome),)), 0)


def runs(samples, status: str, stage: str = "embedding") -> float | None:
    return samples.get(("loom_stage_runs", (("stage", stage), ("status", status))))


def ledger() -> dict[str, int]:
    """The ledger's own counts, by status."""
    with db.session() as s:
        rows = s.exec(select(StageRun.status, func.count()).group_by(StageRun.status)).all()
    return {status: 0 for status in STATUSES} | dict(rows)


def test_metrics_count_appends_by_outcome_and_time_them(client, make_token):
    enable_logging("metrics")
    writer = make_token("metrics", "metrics-off", role="writer")
    before = scrape(client)
    body = {"namespace": "metrics", "thread_id": "t", "role": "user", "content": "counted", "msg_id": "m1"}
    for answer in (
        client.post("/v1/conversation.append", json=body, headers=writer),
        client.post("/v1/conversation.append", json=body, headers=writer),
        client.post("/v1/conversation.append", json=body | {"namespace": "metrics-off"}, headers=writer),
    ):
        assert answer.status_code == 200
    refused = client.post("/v1/conversation.append", json=body | {"namespace": "other"}, headers=writer)
    assert refused.status_code == 403
    after = scrape(client)
    counted = {outcome: appends(after, outcome) - appends(before, outcome) for outcome in OUTCOMES}
    assert counted == {"stored": 1, "duplicate": 1, "logging_disabled": 1, "rejected": 1, "error": 0}
    timed = {part: after[(f"loom_append_duration_seconds_{part}", ())] for part in ("count", "sum")}
    assert timed["count"] - before.get(("loom_append_duration_seconds_count", ()), 0) == 4
    assert timed["sum"] > before.get(("loom_append_duration_seconds_sum", ()), 0)


def test_every_outcome_an_append_can_have_is_a_series_before_it_first_happens(client):
    """A dashboard's rate of a series that appears only once its outcome happens reads nothing,
    not zero, until then: every reason conversation.append answers with is there from the start."""
    said, _ = get_args(AppendAnswer.model_fields["reason"].annotation)
    samples = scrape(client)
    for outcome in ("stored", *get_args(said), "rejected", "error"):
        assert ("loom_appends_total", (("outcome", outcome),)) in samples, outcome


def test_metrics_show_the_services_up(client):
    samples = scrape(client)
    assert samples[("loom_database_up", ())] == 1
    assert samples[("loom_broker_up", ())] == 1


def test_pending_runs_show_by_status_with_the_age_of_the_oldest_and_their_queue(client, broker):
    broker.flush_all()
    enable_logging("waiting")
    ids = [append("waiting", "t", f"waiting turn {i}")["turn_id"] for i in range(3)]
    with db.session() as s:  # no worker runs: they wait; make the oldest have waited 90 s
        s.exec(
            text(
                "UPDATE stage_runs SET available_at = now() - interval '90 seconds' WHERE subject = :subject"
            ),
            params={"subject": embedding_subject(ids[0])},
        )
    samples = scrape(client)
    expected = ledger()
    assert expected["pending"] >= 3
    assert {status: runs(samples, status) for status in STATUSES} == expected
    age = samples[("loom_stage_oldest_pending_age_seconds", (("stage", "embedding"),))]
    assert 90 <= age < 300
    # Each append woke the actor unless a message was still waiting: one message is queued.
    assert samples[("loom_queue_depth", (("queue", "embedding"), ("state", "ready")))] == 1
    assert samples[("loom_queue_depth", (("queue", "embedding"), ("state", "delayed")))] == 0
    broker.flush_all()


def test_after_a_worker_embeds_the_runs_count_as_succeeded_and_the_embedder_throughput_shows(
    client, worker, openai_embedder
):
    enable_logging("embedded")
    for i in range(4):
        append("embedded", "t", f"a turn to embed {i}")
    wait_until(settled, what="the embedding runs")
    samples = scrape(client)
    expected = ledger()
    assert expected["succeeded"] >= 4 and expected["pending"] == 0
    assert {status: runs(samples, status) for status in STATUSES} == expected
    assert samples[("loom_stage_oldest_pending_age_seconds", (("stage", "embedding"),))] == 0
    with db.session() as s:
        recent = s.exec(
            text("SELECT count(*) FROM embeddings WHERE embedded_at > now() - interval '60 seconds'")
        ).one()[0]
    assert recent >= 4
    rate = {w: samples[("loom_embedder_turns_per_second", (("window", w),))] for w in ("1m", "5m")}
    assert rate["1m"] == pytest.approx(recent / 60, rel=0.3) and rate["5m"] > 0


# --- healthz -------------------------------------------------------------------------------------


def assert_leaks_nothing(answer) -> None:
    endpoints = (get_settings().database_url or "") + " " + (get_settings().redis_url or "")
    ports = {part.split("/")[0] for part in endpoints.split(":")[1:] if part.split("/")[0].isdigit()}
    assert ports  # the check below looks for something
    for secret in ("127.0.0.1", "localhost", "error", "Error", "refused", *ports):
        assert secret not in answer.text, secret


@pytest.mark.parametrize("role", [None, "writer", "unknown"])
def test_healthz_answers_only_its_status_without_an_admin_token(client, make_token, role):
    headers = {}
    if role == "writer":
        headers = make_token("h", role="writer")
    elif role == "unknown":
        headers = {"Authorization": "Bearer loom_not-a-token"}
    answer = client.get("/healthz", headers=headers)
    assert answer.status_code == 200 and answer.json() == {"status": "ok"}
    assert_leaks_nothing(answer)


def test_healthz_gives_an_admin_the_checks(client, make_token):
    answer = client.get("/healthz", headers=make_token("h", role="admin"))
    assert answer.status_code == 200
    assert answer.json() == {"status": "ok", "database": "ok", "broker": "ok"}


@pytest.fixture
def app_with(monkeypatch):
    """A fresh app with other settings (an app reads its endpoints on first use), e.g.
    ``app_with(LOOM_REDIS_URL=...)``."""
    from api.app import create_app

    clients = []

    def make(**environment: str) -> TestClient:
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()
        client = TestClient(create_app(warm_embedder=False), base_url="http://127.0.0.1")
        clients.append(client)
        client.__enter__()
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)
    monkeypatch.undo()
    get_settings.cache_clear()
    db.reset_engine()  # in case anything built one on the settings above


def test_with_the_broker_down_healthz_is_503_and_tells_only_an_admin_why(app_with, make_token):
    client = app_with(LOOM_REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    anonymous = client.get("/healthz")
    assert anonymous.status_code == 503 and anonymous.json() == {"status": "degraded"}
    assert_leaks_nothing(anonymous)
    admin = client.get("/healthz", headers=make_token("h", role="admin"))
    assert admin.status_code == 503
    details = admin.json()
    assert details["status"] == "degraded" and details["database"] == "ok"
    assert details["broker"].startswith("error: ") and "refused" in details["broker"].lower()
    samples = scrape(client)
    assert samples[("loom_broker_up", ())] == 0 and samples[("loom_database_up", ())] == 1
    assert not [key for key in samples if key[0] == "loom_queue_depth"]  # unknown, not zero


@pytest.fixture
def silent_port():
    """A port that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield listener.getsockname()[1]


@pytest.mark.parametrize("service", ["database", "broker"])
def test_a_server_that_never_answers_does_not_hang_metrics_or_healthz(app_with, silent_port, service):
    client = app_with(
        **(
            {"LOOM_DATABASE_URL": f"postgresql+psycopg://postgres@127.0.0.1:{silent_port}/loom"}
            if service == "database"
            else {"LOOM_REDIS_URL": f"redis://127.0.0.1:{silent_port}/0"}
        )
    )
    started = time.monotonic()
    healthz = client.get("/healthz")
    samples = scrape(client)
    assert time.monotonic() - started < 7
    assert healthz.status_code == 503 and healthz.json() == {"status": "degraded"}
    assert samples[(f"loom_{service}_up", ())] == 0
    other = "broker" if service == "database" else "database"
    assert samples[(f"loom_{other}_up", ())] == 1


def test_scrapes_within_the_cache_window_share_one_snapshot(client, monkeypatch):
    from models.settings import get_settings
    from ops import status

    taken = []
    real = status.Probe.snapshot
    monkeypatch.setattr(status.Probe, "snapshot", lambda self: taken.append(1) or real(self))
    monkeypatch.setenv("LOOM_METRICS_CACHE_SECONDS", "60")
    get_settings.cache_clear()
    try:
        for _ in range(5):
            scrape(client)
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
    assert len(taken) <= 1  # one snapshot for five scrapes (none if an earlier one is still fresh)
