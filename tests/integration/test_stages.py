"""A stage is one module: a stage registered with ``workers.stages.register`` is found by the outbox,
the sweep, the worker, `loom runs retry` and the status snapshot with no edit elsewhere."""

import pytest
from sqlalchemy import text
from sqlmodel import select
from typer.testing import CliRunner

from models import db
from models.stage_run import FAILED, PENDING, SKIPPED, SUCCEEDED, StageRun
from models.stages import Stage
from workers import ledger, stages

NAME = "t_echo"
handled: list[int] = []


@pytest.fixture(scope="module")
def echo_stage(broker):
    """A stage of the test's own: claims its runs and closes them."""

    def echo(run_ids: list[int]) -> None:
        runs = ledger.claim(NAME, run_ids, fill=10)
        handled.extend(run.id for run in runs)
        with db.session() as s:
            ledger.finish(s, runs, SUCCEEDED)

    yield stages.register(Stage(NAME, "echo", subject_kind="echo", retryable=(FAILED,)), echo)
    stages._registered.pop(NAME)  # later modules see only the real stages


def runs_of(status: str, n: int) -> list[int]:
    with db.session() as s:
        return list(
            s.exec(
                text(
                    "INSERT INTO stage_runs (stage, subject, idem_key, status, attempts, created_at, "
                    "updated_at, available_at) SELECT :stage, 'echo:' || g, 'echo:' || :status || g, "
                    ":status, 3, now(), now(), now() FROM generate_series(1, :n) g RETURNING id"
                ),
                params={"stage": NAME, "status": status, "n": n},
            ).scalars()
        )


def status_of(ids: list[int]) -> set[str]:
    with db.session() as s:
        return set(s.exec(select(StageRun.status).where(StageRun.id.in_(ids))))


def test_a_registered_stage_is_found_by_name_and_its_queue(echo_stage):
    assert stages.get(NAME) is echo_stage and echo_stage.queue == NAME
    assert {"embedding", NAME} <= set(stages.all_stages())
    with pytest.raises(ValueError, match="twice"):
        stages.register(Stage(NAME, "echo", subject_kind="echo"), stages.body(echo_stage))


def test_every_stage_has_an_actor_on_the_process_broker_that_dramatiq_never_retries(echo_stage):
    """The ledger owns attempts and backoff: a message whose work raised is not delivered again by
    Dramatiq (its run comes back when its lease lapses, or by a release with backoff)."""
    from workers import broker

    for stage in stages.all_stages().values():
        actor = broker.actor(stage)
        assert actor.broker is broker.current() and actor.queue_name == stage.queue
        assert actor.options["max_retries"] == 0, stage.name


def test_an_operator_retry_of_a_new_stage_revives_its_runs_and_its_actor_closes_them(echo_stage):
    import cli

    failed, skipped = runs_of(FAILED, 3), runs_of(SKIPPED, 2)
    refused = CliRunner().invoke(cli.app, ["runs", "retry", "--stage", NAME, "--status", SKIPPED])
    assert refused.exit_code == 2 and "does not retry skipped" in refused.stderr
    result = CliRunner().invoke(cli.app, ["runs", "retry", "--stage", NAME, "--status", FAILED])
    assert result.exit_code == 0 and "3 t_echo runs queued again" in result.stdout
    assert status_of(failed) == {PENDING}
    stages.body(echo_stage)(failed)  # what a worker consuming the stage's queue runs
    assert set(failed) <= set(handled)
    assert status_of(failed) == {SUCCEEDED} and status_of(skipped) == {SKIPPED}
    unknown = CliRunner().invoke(cli.app, ["runs", "retry", "--stage", "nope", "--status", FAILED])
    assert unknown.exit_code == 2 and "--stage must be one of" in unknown.stderr


def test_the_status_snapshot_lists_a_new_stage(echo_stage):
    from ops import status

    probe = status.Probe()
    try:
        assert NAME in probe.snapshot().stages
    finally:
        probe.close()
