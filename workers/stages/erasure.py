"""The erasure stage: one run carries out one erasure request (``erasure.request``): a person's
data in a namespace (``user_id``), or whole namespaces (``namespaces``, with ``purge`` to remove
rather than tombstone), step by step in the order ``pipelines.erasure`` gives (what goes, and how).
The erasure log gets one ``finished`` event with the counts.

Bounded and resumable: each batch of ``LOOM_ERASURE_BATCH`` rows is one transaction that also adds
its counts to the run's result, and the next batch is found by what is still there, so a run
killed anywhere is finished by the next delivery with nothing done twice and the counts whole."""

import logging

from models import db
from models.base import utcnow
from models.settings import get_settings
from models.stage_run import SUCCEEDED, StageRun
from models.stages import ERASURE
from pipelines import erasure
from workers import ledger
from workers.bodies import counted, one_at_a_time
from workers.stages import register

log = logging.getLogger(__name__)


def erase(run_ids: list[int]) -> None:
    one_at_a_time(ERASURE, run_ids, _work)


register(ERASURE, erase)


def _work(run: StageRun) -> None:
    steps, params = erasure.steps_of(run.params)
    batch = get_settings().erasure_batch
    with ledger.leased([run]):
        for table, step in steps.items():
            while _one_batch(run, table, step, {**params, "n": batch, "now": utcnow()}) == batch:
                pass
    with db.session() as s:
        counts = s.get_one(StageRun, run.id).result or {}
        erasure.log_finished(s, ERASURE.subject_id(run.subject), counts)
        ledger.finish(s, [run], SUCCEEDED, keep_result=True)
    log.info("erasure %s finished: %s", run.subject, counts)


def _one_batch(run: StageRun, table: str, step: erasure.Step, params: dict) -> int:
    """One batch and its count on the run's result, in one transaction."""
    return counted(run, table, lambda s: erasure.one_batch(s, step, params))
