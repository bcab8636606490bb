"""The contexts stage: the lexical contexts of the turns of one month (``pipelines.contexts``)
rebuilt from their live neighbours, for the turns written before contexts existed (migration
0032); the contexts pass (``schedules/contexts.py``) asks for a run of each month once.

A run works on one month (``month:YYYYMM``): the threads holding live said turns in that month's
partition, whole (a context may come from another month), a batch of threads a transaction with
their rows locked, as every rebuild does. A rebuild computes what the append writes and writes only
what differs, so a context the append already wrote is left as it is, a run done twice changes
nothing more, and a run killed anywhere is finished by the next delivery (its count is of the turns
it changed)."""

from models import db, partitions
from models.stage_run import SUCCEEDED, StageRun
from models.stages import CONTEXTS
from pipelines import contexts
from workers import ledger
from workers.bodies import close, counted, one_at_a_time
from workers.stages import register

# What a run builds: a new definition of a context (another SHORT_CHARS) is a new run of every month.
VERSION = f"previous-{contexts.SHORT_CHARS}"


def build_contexts(run_ids: list[int]) -> None:
    one_at_a_time(CONTEXTS, run_ids, _work)


register(CONTEXTS, build_contexts)


def _work(run: StageRun) -> None:
    month = partitions.of_month(CONTEXTS.subject_id(run.subject))
    with ledger.leased([run]):
        with db.session() as s:
            threads = contexts.of_month(s, month)
        for batch in contexts.batches(threads):
            _batch(run, batch)
    close(run, SUCCEEDED, keep_result=True)


def _batch(run: StageRun, threads: list[tuple[str, str]]) -> int:
    """One transaction: the threads' contexts rebuilt, the turns changed counted on the run."""
    return counted(run, "turns", lambda s: contexts.rebuild(s, threads))
