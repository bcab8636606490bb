"""Nothing is lost for want of a broker: with Redis stopped, appends still store; once it is back,
the scheduler's sweep re-sends the pending runs."""

import time
from datetime import timedelta

import pytest
import redis
from freezegun import freeze_time
from sqlmodel import col, select

from models import db
from models.base import utcnow
from models.settings import get_settings
from models.stage_run import PENDING, SUCCEEDED, StageRun
from schedules.registry import passes
from services import redis as embedded_redis
from tests.support.calls import append, enable_logging
from tests.support.rows import embedding_subject, redis_config_set
from tests.support.waits import settled, wait_until


def statuses(answers: list[dict]) -> list[str]:
    """The embedding runs' statuses of these appends' turns, in order."""
    subjects = [embedding_subject(a["turn_id"]) for a in answers]
    with db.session() as s:
        return list(
            s.exec(
                select(StageRun.status).where(col(StageRun.subject).in_(subjects)).order_by(col(StageRun.id))
            )
        )


def test_appends_store_while_redis_is_down_and_the_sweep_sends_them_once_it_is_back(broker, openai_embedder):
    home = get_settings().home
    enable_logging("outage")
    broker.flush_all()
    embedded_redis.stop(home)
    with pytest.raises(redis.ConnectionError):
        broker.client.ping()
    try:
        answers = [append("outage", "t", f"written while the broker is down {i}") for i in range(3)]
        assert all(a["stored"] and a["embedding"] == "pending" for a in answers)
        assert statuses(answers) == [PENDING] * 3
    finally:
        embedded_redis.start(home)
    assert not broker.client.keys("dramatiq:embedding*"), broker.client.hgetall("dramatiq:embedding.msgs")
    sweep = passes()["sweep"]
    sweep.run()
    # Still within the grace period: maybe their messages are in flight.
    assert statuses(answers) == [PENDING] * 3
    with freeze_time(utcnow() + timedelta(seconds=get_settings().sweep_grace_seconds + 1)):
        sweep.run()
    from workers.runner import new_worker, stop

    worker = new_worker(threads=2)
    worker.start()
    try:
        wait_until(settled, what="the swept runs")
    finally:
        stop(worker)
    assert statuses(answers) == [SUCCEEDED] * 3
    sent = [text for call in openai_embedder.embedding_calls for text in call]
    assert len([text for text in sent if text.startswith("written while the broker is down")]) == 3


def test_an_append_still_stores_when_redis_refuses_writes(broker, openai_embedder):
    # A Redis that answers but refuses writes (here: no replica to confirm them; likewise
    # read-only after a failover, or out of memory) must not turn a stored turn into a 500.
    enable_logging("refusing")
    broker.flush_all()
    redis_config_set(broker.client, "min-replicas-to-write", 1)
    try:
        with pytest.raises(redis.ResponseError):
            broker.client.set("loom:probe", 1)
        answer = append("refusing", "t", "written while Redis refuses writes")
    finally:
        redis_config_set(broker.client, "min-replicas-to-write", 0)
    assert answer["stored"] and answer["embedding"] == "pending"
    assert statuses([answer]) == [PENDING]  # the sweep sends it once Redis takes writes again


def test_a_sweep_while_redis_is_down_touches_nothing_and_appends_do_not_wait_on_it(broker):
    from workers import outbox

    home = get_settings().home
    enable_logging("sweepdown")
    embedded_redis.stop(home)
    try:
        started = time.monotonic()
        answers = [append("sweepdown", "t", f"appended while Redis is down {i}") for i in range(20)]
        assert time.monotonic() - started < 5  # one failed send, then the quiet period: no waits
        with db.session() as s:
            before = list(
                s.exec(select(StageRun.updated_at).where(col(StageRun.subject).in_(subjects(answers))))
            )
        with freeze_time(utcnow() + timedelta(seconds=get_settings().sweep_grace_seconds + 1)):
            assert outbox.sweep(get_settings().sweep_grace_seconds) == []
        with db.session() as s:
            after = list(
                s.exec(select(StageRun.updated_at).where(col(StageRun.subject).in_(subjects(answers))))
            )
        assert after == before  # not touched: they are swept as soon as Redis is back
    finally:
        embedded_redis.start(home)
    with freeze_time(utcnow() + timedelta(seconds=get_settings().sweep_grace_seconds + 1)):
        assert len(outbox.sweep(get_settings().sweep_grace_seconds)) >= len(answers)
    broker.flush_all()


def subjects(answers: list[dict]) -> list[str]:
    return [embedding_subject(a["turn_id"]) for a in answers]
