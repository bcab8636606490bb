"""The retention stage: the monthly partitions of ``turns`` past the TTL or the warm age
(``pipelines.retention``: what a month needs, and the work of each need). The retention pass
(``schedules/retention.py``) requests the runs.

A run works on one month (``month:YYYYMM``): ``drop``, ``trim-<cutoff day>`` or
``warm-<tablespace>``. Each step is idempotent and each transaction bounded, so a run done twice
removes nothing more and a run killed anywhere is finished by the next: a drop first rebuilds the
lexical contexts of the month's threads (a batch of threads a transaction) without its turns, a
detach interrupted by a kill is finalised, the counts and the drop are one transaction, keys and
trims go in batches of ``LOOM_RETENTION_BATCH``."""

import logging
from datetime import datetime

from models import db, partitions
from models.settings import get_settings
from models.stage_run import SUCCEEDED, StageRun
from models.stages import RETENTION
from pipelines import contexts, retention
from workers import ledger
from workers.bodies import close, counted, one_at_a_time
from workers.stages import register

log = logging.getLogger(__name__)


def keep_partitions(run_ids: list[int]) -> None:
    one_at_a_time(RETENTION, run_ids, _work)


register(RETENTION, keep_partitions)


def _work(run: StageRun) -> None:
    month = partitions.of_month(RETENTION.subject_id(run.subject))
    action = run.params["action"]
    with ledger.leased([run]):
        if action == retention.DROP:
            _drop(run, month)
        elif action == retention.TRIM:
            _trim(run, month, datetime.fromisoformat(run.params["before"]))
        else:
            for name in retention.warm(month, run.params["tablespace"]):
                log.info("retention moved %s to tablespace %s", name, run.params["tablespace"])
    close(run, SUCCEEDED, keep_result=True)  # the counts each step added as it went


def _drop(run: StageRun, month: datetime) -> None:
    with db.session() as s:
        threads = contexts.of_month(s, month)
    for batch in contexts.batches(threads):
        with db.session() as s:
            retention.forget_contexts(s, month, batch)
    retention.detach(month)
    # The threads' counts, the drop and its count, together: a kill leaves all or none.
    counted(run, "turns", lambda s: retention.drop(s, month))
    while _keys_batch(run, month) == get_settings().retention_batch:
        pass
    log.info("retention dropped %s", partitions.name_of(month))


def _keys_batch(run: StageRun, month: datetime) -> int:
    return counted(run, "keys", lambda s: retention.forget_keys(s, month, get_settings().retention_batch))


def _trim(run: StageRun, month: datetime, before: datetime) -> None:
    """The month's turns said before the cutoff, a batch (with their keys and counts) a transaction."""
    with db.session() as s:
        if not retention.exists(s, month):
            return
    while _trim_batch(run, month, before) == get_settings().retention_batch:
        pass
    name = partitions.name_of(month)
    log.info("retention trimmed %s of the turns said before %s", name, before.isoformat())


def _trim_batch(run: StageRun, month: datetime, before: datetime) -> int:
    return counted(run, "turns", lambda s: retention.trim(s, month, before, get_settings().retention_batch))
