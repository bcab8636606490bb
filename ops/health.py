"""``health.get``: ``loom status`` over HTTP, from the probes of ``ops.status`` and this API
process's own counts (``ops.activity``). For an operator (a token of every namespace); the errors,
which name hosts and ports, go to admins only."""

import functools

from pydantic import Field

from ops import activity, status
from ops.caller import Caller
from ops.schemas import Answer, OperatorRequest
from services import Endpoints


class HealthRequest(OperatorRequest):
    pass


class StageHealth(Answer):
    runs: dict[str, int] | None = Field(
        description="The stage's runs counted by status; null while the database is down."
    )
    oldest_pending_seconds: float | None = Field(
        description="How long the oldest pending run has waited, in seconds; null when none waits."
    )
    queue: str = Field(description="The broker queue the stage's runs are sent on.")
    queued: dict[str, int] | None = Field(
        description="The queue's messages: ready, delayed and dead; null while the broker is down."
    )


class HealthAnswer(Answer):
    database: str = Field(
        description='ok, or (to an admin) the error, which names hosts and ports; "down" to others.'
    )
    broker: str = Field(description='ok, or (to an admin) the broker\'s error; "down" to others.')
    stages: dict[str, StageHealth] = Field(
        description="Each stage's runs, queue and oldest pending run, by stage name."
    )
    embedded_per_second: dict[str, float] | None = Field(
        description="Embeddings written per second over the last 1m and 5m; null when unknown."
    )
    errors: list[str] = Field(
        description="Reads that failed while their server was up (to an admin only; empty to others)."
    )
    # This API process's last hour, a minute a value, the current minute last (``ops.activity``).
    appended_per_minute: list[int] = Field(
        description="This API process's appends in each minute of the last hour, the current minute last."
    )
    searched_per_minute: list[int] = Field(
        description="This API process's searches in each minute of the last hour, the current minute last."
    )


@functools.lru_cache(maxsize=4)
def _probe(at: Endpoints) -> status.Probe:
    """One probe (its own small pool) per database and broker this process reads."""
    return status.Probe(at)


def health(caller: Caller, req: HealthRequest) -> HealthAnswer:
    """Read the server's health: database, broker, each stage's runs and queue.

    `loom status` over HTTP: the servers' checks, each stage's runs by status, queue and oldest pending
    run, the embedding throughput, and this API process's appends and searches per minute over the
    last hour. For an operator (a token of every namespace); error details go to admins only."""
    snap = _probe(status.endpoints()).recent_snapshot()

    def shown(check: status.Check) -> str:  # as /healthz tells them: the detail to an admin only
        return check.label if caller.role == "admin" or check.ok else "down"

    return HealthAnswer(
        database=shown(snap.database),
        broker=shown(snap.broker),
        stages={
            name: StageHealth(
                runs=stage.runs,
                oldest_pending_seconds=stage.oldest_pending_seconds,
                queue=stage.queue,
                queued=stage.queued,
            )
            for name, stage in snap.stages.items()
        },
        embedded_per_second=snap.embedded_per_second,
        errors=snap.errors if caller.role == "admin" else [],
        appended_per_minute=activity.APPENDED.series(),
        searched_per_minute=activity.SEARCHED.series(),
    )
