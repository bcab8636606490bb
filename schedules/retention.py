"""The retention pass: this month's partition of turns and the next ones made, then a retention
run asked for each month to drop, trim or move to the warm tablespace (``pipelines.retention.plan``),
made pending again when one done before finds the month needing it again (a month a late import
made anew). Returns the runs sent."""

from models import db
from models.base import stored, utcnow
from models.settings import get_settings
from models.stage_run import PENDING
from models.stages import RETENTION
from pipelines import retention
from workers import ledger, outbox


def plan_partitions() -> list[int]:
    settings = get_settings()
    needs = retention.plan(
        utcnow(),
        keep_days=settings.retention_conversations_days,
        warm_days=settings.tiering_conversations_warm_days,
        warm_tablespace=settings.warm_tablespace,
    )
    with db.session() as s:
        runs = [ledger.wanted_again(s, RETENTION, need.month, need.version, need.params) for need in needs]
    pending = [stored(run.id) for run in runs if run.status == PENDING]
    if pending:
        outbox.send(RETENTION, pending)
    return pending
