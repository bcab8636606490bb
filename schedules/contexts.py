"""The contexts pass: a contexts run (``workers/stages/contexts.py``) asked for each month partition
of turns that has none yet, so that the turns written before contexts existed get theirs. Fired
when the scheduler starts, so the first start after the upgrade asks for every month; later
firings ask only for the months made since, which the append fills as it writes (their run finds
nothing to change). A done run is not asked again. Returns the runs sent."""

from models import db, partitions
from models.base import stored
from models.stage_run import PENDING
from models.stages import CONTEXTS
from workers import ledger, outbox
from workers.stages.contexts import VERSION


def build_missing() -> list[int]:
    with db.autocommit() as conn:
        months = [p.month for p in partitions.listing(conn)]
    with db.session() as s:
        runs = [ledger.request(s, CONTEXTS, month, VERSION, {}) for month in months]
    pending = [stored(run.id) for run in runs if run.status == PENDING]
    if pending:
        outbox.send(CONTEXTS, pending)
    return pending
