"""The re-screening stage: judge again, with the rules of this build, the turns an older version
of the screening rules judged (``pipelines.screening.rescreening``). Screening stays inline at write time
(nothing reaches a model first); this is how an installation applies better rules to what it
already holds.

A run covers one fixed range of turn ids (``turns:<k>``: ids k*span .. (k+1)*span-1) for one
rules version (and one namespace, or all), so the pass that asks for runs (``schedules/screening.py``)
asks for the same ones until they are done, and a range is one bounded transaction. Safe to run
twice (a judged turn is no longer older) and to kill anywhere (the transaction is all or nothing)."""

from models import db
from models.base import stored
from models.stage_run import PENDING, SKIPPED, SUCCEEDED, StageRun
from models.stages import EMBEDDING, SCREENING
from pipelines import screening
from pipelines.screening import rescreening
from workers import ledger, outbox
from workers.bodies import close, one_at_a_time
from workers.stages import register


def rescreen_turns(run_ids: list[int]) -> None:
    one_at_a_time(SCREENING, run_ids, _work)


register(SCREENING, rescreen_turns)


def _work(run: StageRun) -> None:
    span, version, namespace = run.params["span"], run.params["version"], run.params.get("namespace")
    if version < screening.RULES_VERSION:
        return close(run, SUCCEEDED, reason="overtaken")  # this build's pass asks for its own runs
    if version > screening.RULES_VERSION:  # during an upgrade: a newer build's pass revives it
        return close(run, SKIPPED, reason="newer-rules")
    k = SCREENING.subject_id(run.subject)
    with db.session() as s:
        judged = rescreening.judge_again(s, range(k * span, (k + 1) * span), version, namespace)
        runs = [ledger.request(s, EMBEDDING, row_id, digest[:16], {}) for row_id, digest in judged.to_embed]
    if pending := [stored(r.id) for r in runs if r.status == PENDING]:
        outbox.wake(EMBEDDING, pending)
    close(run, SUCCEEDED, result=judged.counts)
    return None
