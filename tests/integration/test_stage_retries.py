"""Stages that do not burn their retries: backoff before a released run is claimed again, a lease
renewed while a batch works, one bad text failing only its own run, and bounded batches for the
sweep and operator retries."""

import json
import logging
import time
from contextlib import contextmanager
from datetime import timedelta

import pytest
from freezegun import freeze_time
from sqlalchemy import text
from sqlmodel import select

from models import db
from models.base import utcnow
from models.conversation import Embedding, Thread
from models.settings import get_settings
from models.stage_run import FAILED, HISTORY_KEPT, PENDING, RUNNING, SUCCEEDED, StageRun
from models.stages import EMBEDDING
from pipelines.embedding import Pending, embed_isolating
from tests.support.calls import append, enable_logging
from tests.support.rows import embedding_subject, redis_config_set
from tests.support.waits import settled, wait_until
from workers import ledger, outbox


@pytest.fixture(scope="module", autouse=True)
def recording():
    enable_logging("retries")


def run_for(turn_id: int) -> StageRun:
    with db.session() as s:
        return s.exec(select(StageRun).where(StageRun.subject == embedding_subject(turn_id))).one()


def run_for_id(run_id: int) -> StageRun:
    with db.session() as s:
        return s.get(StageRun, run_id)


def lone_run(thread_id: str, text_: str) -> int:
    """An appended turn's run, moved to a stage of its own so that a claim of that stage can
    only ever take this run (a claim fills its batch with any other claimable run of its stage)."""
    run_id = run_for(append("retries", thread_id, text_)["turn_id"]).id
    with db.session() as s:
        s.exec(
            text("UPDATE stage_runs SET stage = :stage WHERE id = :id"), params={"stage": LONE, "id": run_id}
        )
    return run_id


LONE = "lone"


def test_a_released_run_waits_out_its_backoff_before_any_claim_takes_it(monkeypatch):
    monkeypatch.setenv("LOOM_STAGE_MIN_BACKOFF_MS", "5000")  # not the suite's 20 ms: no race below
    monkeypatch.setenv("LOOM_STAGE_MAX_BACKOFF_MS", "60000")
    get_settings.cache_clear()
    try:
        backs_off()
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()


def backs_off() -> None:
    run_id = lone_run("backoff", "a turn whose embed fails once")
    (claimed,) = ledger.claim(LONE, [run_id], fill=1)
    with db.session() as s:
        retrying = ledger.release(s, [claimed], "EmbedderUnavailable: down")
    wait = ledger.backoff(claimed.attempts)
    assert retrying == {wait: [run_id]}
    assert wait >= timedelta(milliseconds=get_settings().stage_min_backoff_ms)
    assert ledger.claim(LONE, [run_id], fill=1) == []  # at once: still backing off
    with freeze_time(utcnow() + wait / 2):
        assert ledger.claim(LONE, [run_id], fill=1) == []
        assert run_id not in ledger.stale(grace_seconds=0).get(LONE, [])
    with freeze_time(utcnow() + wait + timedelta(milliseconds=1)):
        again = ledger.claim(LONE, [run_id], fill=1)
        assert [r.id for r in again] == [run_id]
        finish(again)


def finish(runs: list[StageRun]) -> None:
    """Close runs a test claimed by hand, so no worker of a later test waits for them."""
    with db.session() as s:
        ledger.finish(s, runs, SUCCEEDED)


def claim_once_lapsed(run_id: int, timeout: float) -> list[StageRun]:
    """Claim the lone run as soon as its lease has lapsed (as another worker would)."""
    deadline = time.monotonic() + timeout
    while not (runs := ledger.claim(LONE, [run_id], fill=1)):
        assert time.monotonic() < deadline, f"the lease did not lapse in {timeout}s"
        time.sleep(0.05)
    return runs


def test_only_the_claim_holding_a_run_may_finish_renew_or_release_it(monkeypatch):
    monkeypatch.setenv("LOOM_STAGE_LEASE_SECONDS", "3")  # the shortest lease allowed
    get_settings.cache_clear()
    try:
        run_id = lone_run("claims", "a turn whose first worker lost its lease")
        first = ledger.claim(LONE, [run_id], fill=1)
        second = claim_once_lapsed(run_id, timeout=10)
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
    ledger.extend(first)  # the first worker comes back: none of this touches the second's claim
    with db.session() as s:
        ledger.finish(s, first, SUCCEEDED)
        ledger.release(s, first, "late")
    with db.session() as s:
        row = s.get(StageRun, run_id)
    assert (row.status, row.claim, row.lease_expires_at) == (
        RUNNING,
        second[0].claim,
        second[0].lease_expires_at,
    )
    finish(second)
    with db.session() as s:
        assert s.get(StageRun, run_id).status == SUCCEEDED


def test_a_stopping_worker_claims_no_new_run_and_names_its_stage_for_the_next_worker(worker):
    """Told to stop, a worker still receives messages through its grace: each claim takes nothing,
    the run stays pending with no attempt spent, and its stage is among those to wake."""
    ledger.stop_claiming()
    try:
        run_id = run_for(append("retries", "stopping", "said while the worker stops")["turn_id"]).id
        worker.broker.join(EMBEDDING.queue, timeout=30_000)  # delivered, acked
        run = run_for_id(run_id)
        assert (run.status, run.attempts, run.claim) == (PENDING, 0, None)
        assert ledger.claim(EMBEDDING.name, [run_id], fill=1) == []
        to_wake = ledger.hand_back()
    finally:
        ledger.start_claiming()  # the next worker
    assert EMBEDDING.name in to_wake
    outbox.send(EMBEDDING, [run_id])
    wait_until(lambda: run_for_id(run_id).status == SUCCEEDED, what="the next worker's embedding")


def test_backoff_doubles_from_the_minimum_up_to_the_maximum():
    settings = get_settings()
    waits = [ledger.backoff(n) for n in range(1, 12)]
    assert waits[0] == timedelta(milliseconds=settings.stage_min_backoff_ms)
    assert waits[1] == 2 * waits[0] and waits == sorted(waits)
    assert waits[-1] == timedelta(milliseconds=settings.stage_max_backoff_ms)


def test_a_lease_is_renewed_while_the_batch_works_and_lapses_once_it_stops(monkeypatch):
    monkeypatch.setenv("LOOM_STAGE_LEASE_SECONDS", "3")
    get_settings.cache_clear()
    try:
        run_id = lone_run("lease", "a turn held by a slow batch")
        runs = ledger.claim(LONE, [run_id], fill=1)
        with ledger.leased(runs):
            time.sleep(7.5)  # two and a half leases: only the heartbeat keeps it
            assert ledger.claim(LONE, [run_id], fill=1) == []
        # The worker "dies" here: nothing renews the lease any more.
        finish(claim_once_lapsed(run_id, timeout=10))
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()


def pending(turn_id: int, text_: str) -> Pending:
    return Pending(turn_id, text_, "d")


def test_bad_texts_are_isolated_by_halving_and_a_dead_embedder_costs_four_calls():
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        if any("POISON" in t for t in texts):
            raise ValueError("this text breaks the model")
        return [[float(len(t))] for t in texts]

    batch = [pending(i, "POISON" if i == 37 else f"text {i}") for i in range(64)]
    vectors, errors = embed_isolating(embed, batch)
    assert set(errors) == {37} and "breaks the model" in errors[37]
    assert set(vectors) == set(range(64)) - {37}
    assert len(calls) <= 1 + 2 * 6  # one split per level down to the bad text

    calls.clear()

    def down(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        raise ConnectionError("endpoint down")

    vectors, errors = embed_isolating(down, batch)
    assert not vectors and set(errors) == set(range(64)) and len(calls) == 4

    calls.clear()
    two_bad = [pending(i, "POISON" if i in (3, 40) else f"text {i}") for i in range(64)]
    vectors, errors = embed_isolating(embed, two_bad)  # one in each half: both halves fail
    assert set(errors) == {3, 40} and set(vectors) == set(range(64)) - {3, 40}
    assert len(calls) <= 2 + 2 * 2 * 6


def test_an_answer_with_the_wrong_number_of_vectors_stores_none_of_them():
    def drops_the_first(texts: list[str]) -> list[list[float]]:
        """Answers one vector short for several texts (each vector names its text's number)."""
        numbered = [[float(text.split()[1])] for text in texts]
        return numbered[1:] if len(numbered) > 1 else numbered

    vectors, errors = embed_isolating(drops_the_first, [pending(i, f"text {i}") for i in range(4)])
    assert not errors and vectors == {i: [float(i)] for i in range(4)}  # no misaligned pair kept


def test_a_batch_with_one_bad_text_stores_the_others_and_fails_only_that_run(worker, monkeypatch):
    from providers import embedders

    real = embedders.get_embedder()

    class Picky:
        name, dimensions = real.name, real.dimensions

        def embed(self, texts: list[str]) -> list[list[float]]:
            if any("\u2620" in t for t in texts):
                raise ValueError("the model cannot take this text")
            return real.embed(texts)

    monkeypatch.setattr("workers.bodies.get_embedder", lambda: Picky())
    ids = [append("retries", "picky", f"an ordinary turn number {i}")["turn_id"] for i in range(10)]
    bad = append("retries", "picky", "a turn the model chokes on \u2620")["turn_id"]
    wait_until(settled, timeout=120, what="the batch")
    assert all(run_for(i).status == SUCCEEDED for i in ids)
    failed = run_for(bad)
    assert failed.status == FAILED and "cannot take this text" in failed.last_error
    assert failed.attempts == get_settings().stage_max_attempts
    with db.session() as s:
        assert s.exec(select(Embedding.vector).where(Embedding.turn_id == bad)).one() is None


def insert_runs(n: int, status: str, stage: str = "embedding", age_seconds: int = 3600) -> list[int]:
    """Bare ledger rows (their subjects name no row: the sweep and retries only move runs)."""
    with db.session() as s:
        return list(
            s.exec(
                text(
                    "INSERT INTO stage_runs (stage, subject, idem_key, status, attempts, created_at, "
                    "updated_at, available_at) SELECT :stage, 'embedding:0', "
                    "'bulk:' || :status || ':' || g || ':' || :tag, :status, 3, "
                    "now() - make_interval(secs => :age), now() - make_interval(secs => :age), "
                    "now() - make_interval(secs => :age) "
                    "FROM generate_series(1, :n) g RETURNING id"
                ),
                params={"stage": stage, "status": status, "n": n, "age": age_seconds, "tag": time.time_ns()},
            ).scalars()
        )


def test_the_sweep_works_in_bounded_batches(broker, monkeypatch):
    ids = insert_runs(1_234, PENDING)
    try:
        assert len(ledger.stale(grace_seconds=60, limit=500)["embedding"]) == 500
        batches: list[int] = []
        monkeypatch.setattr(outbox, "send", lambda stage, run_ids: batches.append(len(run_ids)) or True)
        with freeze_time(utcnow() + timedelta(seconds=120)):  # past the grace of the 500 just touched
            assert len(outbox.sweep(grace_seconds=60)) >= len(ids)
        assert max(batches) <= ledger.BATCH
    finally:
        with db.session() as s:
            s.exec(text("DELETE FROM stage_runs WHERE idem_key LIKE 'bulk:%'"))


def test_an_operator_retry_of_a_stage_moves_failed_runs_in_bounded_batches():
    ids = insert_runs(1_100, FAILED, stage="bulkstage")
    try:
        batches = list(ledger.retry_all("bulkstage", FAILED))
        with db.session() as s:
            statuses = set(s.exec(select(StageRun.status).where(StageRun.stage == "bulkstage")))
            attempts = set(s.exec(select(StageRun.attempts).where(StageRun.stage == "bulkstage")))
    finally:
        with db.session() as s:
            s.exec(text("DELETE FROM stage_runs WHERE stage = 'bulkstage'"))
    assert sum(len(b) for b in batches) == len(ids) and max(len(b) for b in batches) <= ledger.BATCH
    assert statuses == {PENDING} and attempts == {0}


def test_a_spray_of_unknown_tokens_leaves_known_tokens_cached(make_token):
    from ops import caller

    good = make_token("retries", role="viewer")["Authorization"]
    with freeze_time(utcnow()):  # one cache time bucket for the whole test
        spray(caller, good)


def spray(caller, good: str) -> None:
    caller.authenticate(good)
    hits = caller._granted.cache_info().hits
    for i in range(200):
        with pytest.raises(Exception, match="token"):
            caller.authenticate(f"Bearer loom_unknown_{i}")
    caller.authenticate(good)
    assert caller._granted.cache_info().hits == hits + 1  # served from the cache, no query
    misses = caller._granted.cache_info().misses
    for _ in range(5):
        with pytest.raises(Exception, match="token"):
            caller.authenticate("Bearer loom_unknown_0")
    assert caller._granted.cache_info().misses == misses  # a repeated bad token is remembered too


def test_a_broker_outage_is_logged_once_not_once_per_append(broker, caplog):
    from workers.broker import outage

    outage.succeeded()  # an earlier test may have left the broker marked down
    broker.flush_all()  # and a waiting message would spare the appends from sending
    redis_config_set(broker.client, "min-replicas-to-write", 1)  # Redis answers but refuses every write
    try:
        with caplog.at_level(logging.WARNING, logger="workers.broker"):
            answers = [append("retries", "outage", f"append {i} while the broker refuses") for i in range(5)]
    finally:
        redis_config_set(broker.client, "min-replicas-to-write", 0)
    assert all(a["stored"] for a in answers)
    assert len([r for r in caplog.records if "broker unavailable" in r.message]) == 1
    time.sleep(outage.QUIET_SECONDS)  # right after a failure, sends give up without trying
    with caplog.at_level(logging.WARNING, logger="workers.broker"):
        answers.append(append("retries", "outage", "the broker takes writes again"))
    assert any("answers again" in r.message for r in caplog.records)
    with db.session() as s:  # no worker of a later test should wait for these
        subjects = [embedding_subject(a["turn_id"]) for a in answers]
        s.exec(
            text("UPDATE stage_runs SET status = 'succeeded' WHERE subject = ANY(:s)"), params={"s": subjects}
        )


def test_ingest_stops_with_one_line_when_recording_is_switched_off_midway(tmp_path, monkeypatch, worker):
    from typer.testing import CliRunner

    import cli
    from pipelines import appending
    from tests.support.calls import enable_logging as switch

    switch("midway")
    path = tmp_path / "t.md"
    path.write_text("".join(f"# user\nturn {i}\n\n" for i in range(5)))
    real_write, written = appending.write, []

    def write_then_switch_off(conn, turn):
        written.append(turn)
        if len(written) == 3:
            switch("midway", False)
        return real_write(conn, turn)

    monkeypatch.setattr(appending, "write", write_then_switch_off)
    result = CliRunner().invoke(
        cli.app, ["ingest-transcript", "--namespace", "midway", "--file", str(path), "--wait"]
    )
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2 and "switched off" in line and "after 2 of 5" in line
    assert line.endswith("(ingest again once it is on)")  # the whole reason on its one line


def test_a_pass_meeting_an_unreachable_database_logs_one_line_and_the_next_firing_tries_again(
    monkeypatch, caplog
):
    from apscheduler.triggers.interval import IntervalTrigger

    from schedules.registry import Pass
    from schedules.runner import guarded
    from services.ports import free_port

    working = db.url()
    db.configure(f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/loom")
    try:
        sweep = guarded(Pass("sweep", IntervalTrigger(seconds=10), lambda: outbox.sweep(60)))
        with caplog.at_level(logging.WARNING, logger="schedules.runner"):
            sweep()  # no exception for APScheduler to print a traceback of
        assert [r.message for r in caplog.records if r.name == "schedules.runner"] == [
            "sweep skipped, the database is unavailable: OperationalError"
        ]
    finally:
        db.configure(working)
    with pytest.raises(ZeroDivisionError):  # any other error still surfaces (and is recorded)
        guarded(Pass("broken", IntervalTrigger(seconds=10), lambda: 1 / 0))()
    with db.session() as s:
        recorded = s.exec(text("SELECT error FROM pass_runs WHERE name = 'broken'")).scalar()
    assert "ZeroDivisionError" in recorded


def test_a_lease_shorter_than_three_seconds_is_refused(monkeypatch):
    from pydantic import ValidationError

    monkeypatch.setenv("LOOM_STAGE_LEASE_SECONDS", "0")
    get_settings.cache_clear()
    try:
        with pytest.raises(ValidationError, match="stage_lease_seconds"):
            get_settings()
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()


def test_right_after_a_broker_failure_wake_ups_give_up_but_explicit_sends_still_try(broker):
    from workers import broker as broker_module

    broker.flush_all()
    broker_module.outage.failed("test", ConnectionError("just failed"))
    try:
        assert broker_module.outage.quiet()
        assert broker_module.send(EMBEDDING, [1], unless_waiting=True) is False  # no wait on Redis
        assert broker_module.send(EMBEDDING, [1]) is True  # an operator's retry goes out
        assert broker.client.llen(f"{broker.namespace}:embedding") == 1
    finally:
        broker_module.outage.succeeded()
        broker.flush_all()


@pytest.fixture
def nested_loops(monkeypatch):
    """Ledger statements planned as a nested loop that does not materialise its inner side (the plan
    CI met on a fresh table without statistics), under which an ``IN (SELECT … LIMIT n FOR
    UPDATE SKIP LOCKED)`` subquery is scanned again for every outer row, skips the rows this very
    statement already changed and hands out n more each time."""
    plain = db.session

    @contextmanager
    def session():
        with plain() as s:
            for knob in ("enable_hashjoin", "enable_material", "enable_hashagg", "enable_sort"):
                s.exec(text(f"SET LOCAL {knob} = off"))
            yield s

    monkeypatch.setattr(db, "session", session)


def test_a_sweep_touches_no_more_than_its_limit_whatever_the_plan(nested_loops):
    insert_runs(1_234, PENDING)
    try:
        assert len(ledger.stale(grace_seconds=60, limit=500)["embedding"]) == 500
    finally:
        with db.session() as s:
            s.exec(text("DELETE FROM stage_runs WHERE idem_key LIKE 'bulk:%'"))


def test_a_claim_takes_no_more_than_its_fill_whatever_the_plan(nested_loops):
    insert_runs(300, PENDING, stage="bulkclaim")
    try:
        assert len(ledger.claim("bulkclaim", [], fill=32)) == 32
    finally:
        with db.session() as s:
            s.exec(text("DELETE FROM stage_runs WHERE stage = 'bulkclaim'"))


def test_a_revive_moves_no_more_than_its_limit_whatever_the_plan(nested_loops):
    insert_runs(1_100, FAILED, stage="bulkrevive")
    try:
        batches = [len(b) for b in ledger.retry_all("bulkrevive", FAILED)]
        assert batches == [500, 500, 100]
    finally:
        with db.session() as s:
            s.exec(text("DELETE FROM stage_runs WHERE stage = 'bulkrevive'"))


def test_a_run_whose_worker_was_lost_on_its_last_attempt_is_failed_not_claimed_forever(broker):
    ids = insert_runs(3, RUNNING, stage="lostrun")  # attempts 3 = the suite's LOOM_STAGE_MAX_ATTEMPTS
    try:
        with db.session() as s:
            lapsed = (
                "UPDATE stage_runs SET lease_expires_at = now() - interval '1 minute' WHERE stage = :stage"
            )
            s.exec(text(lapsed), params={"stage": "lostrun"})
        assert ledger.claim("lostrun", ids, fill=10) == []
        assert ledger.fail_abandoned() == ids
        with db.session() as s:
            runs = s.exec(select(StageRun).where(StageRun.stage == "lostrun")).all()
        assert {run.status for run in runs} == {FAILED}
        assert all("its worker was lost" in run.last_error for run in runs)
        assert all(run.history[-1]["error"] == "its worker was lost on every attempt" for run in runs)
    finally:
        with db.session() as s:
            s.exec(text("DELETE FROM stage_runs WHERE stage = 'lostrun'"))


def test_an_unexpected_error_in_a_model_stage_releases_its_run_to_fail_in_the_end(llm, worker, monkeypatch):
    from workers.stages import compaction

    def broken(run):
        raise ValueError("a defect in the stage")

    monkeypatch.setattr(compaction, "_work", broken)
    append("retries", "broken-stage", "a turn")
    with db.session() as s:
        thread = s.exec(
            select(Thread).where(Thread.namespace == "retries", Thread.thread_id == "broken-stage")
        ).one()
        run = compaction.request(s, thread.id, "default", 10, 4)
    outbox.send(compaction.COMPACTION, [run.id])
    wait_until(lambda: ledger.get(run.id).status == FAILED, what="the run to fail")
    failed = ledger.get(run.id)
    assert (
        failed.attempts == get_settings().stage_max_attempts and "a defect in the stage" in failed.last_error
    )


def test_a_run_keeps_each_failed_attempt_as_history_and_succeeds_on_retry_without_losing_it():
    run_id = lone_run("history", "a turn whose embed fails twice")
    for error in ("EmbedderUnavailable: down", "TimeoutError: slow"):
        (claimed,) = claim_once_backed_off(run_id)
        with db.session() as s:
            ledger.release(s, [claimed], error)
    finish(claim_once_backed_off(run_id))
    with db.session() as s:
        run = s.get(StageRun, run_id)
    assert (run.status, run.attempts) == (SUCCEEDED, 3)
    assert [(a["attempt"], a["error"]) for a in run.history] == [
        (1, "EmbedderUnavailable: down"),
        (2, "TimeoutError: slow"),
    ]
    assert run.history[0]["at"] <= run.history[1]["at"]  # ISO times of one zone: in order as text


def test_a_runs_history_keeps_only_its_latest_attempts():
    run_id = lone_run("history-cap", "a turn re-run by an operator again and again")
    old = [{"attempt": n, "at": "2026-01-01T00:00:00+00:00", "error": f"e{n}"} for n in range(HISTORY_KEPT)]
    with db.session() as s:
        s.exec(
            text("UPDATE stage_runs SET history = CAST(:h AS jsonb) WHERE id = :id"),
            params={"h": json.dumps(old), "id": run_id},
        )
    (claimed,) = claim_once_backed_off(run_id)
    with db.session() as s:
        ledger.release(s, [claimed], "the newest")
        history = s.get(StageRun, run_id).history
    assert len(history) == HISTORY_KEPT
    assert history[0]["error"] == "e1" and history[-1]["error"] == "the newest"
    finish(claim_once_backed_off(run_id))


def claim_once_backed_off(run_id: int, timeout: float = 10) -> list[StageRun]:
    deadline = time.monotonic() + timeout
    while not (runs := ledger.claim(LONE, [run_id], fill=1)):
        assert time.monotonic() < deadline, f"run {run_id} was not claimable in {timeout}s"
        time.sleep(0.02)
    return runs
