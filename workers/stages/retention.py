"""The retention stage: the monthly partitions of ``turns`` past the TTL or the warm age.

``LOOM_RETENTION_CONVERSATIONS_DAYS`` (0 = keep forever) expires turns said before the cutoff (the
start of the day that many days ago): a month wholly before it is detached (concurrently: reads and
writes of other months go on) and dropped, the month holding it is trimmed in batches. Embedding
rows have no TTL and stay (see ``pipelines.retire`` and ``pipelines.search`` for what they do
once their turn is gone). Threads keep their rows; their ``turn_count`` drops by the live turns
expired. ``LOOM_TIERING_CONVERSATIONS_WARM_DAYS`` moves months wholly older than that to
``LOOM_WARM_TABLESPACE`` (reads do not change).

A run works on one month (``month:YYYYMM``): ``drop``, ``trim-<cutoff day>`` or
``warm-<tablespace>``. Each step is idempotent and each transaction bounded, so a run done twice
removes nothing more and a run killed anywhere is finished by the next: a detach interrupted by a
kill is finalised, the counts and the drop are one transaction, keys and trims go in batches of
``LOOM_RETENTION_BATCH``."""

import logging
from datetime import UTC, datetime, timedelta

from psycopg import sql
from sqlalchemy import text

from models import db, partitions
from models.base import utcnow
from models.settings import get_settings
from models.stage_run import PENDING, SUCCEEDED, StageRun
from workers import ledger, outbox
from workers.stages import Stage, close, one_at_a_time, register
from workers.stages import actor as stage_actor

log = logging.getLogger(__name__)

STAGE = "retention"
DROP, TRIM, WARM = "drop", "trim", "warm"


@stage_actor(STAGE)
def keep_partitions(run_ids: list[int]) -> None:
    one_at_a_time(RETENTION, run_ids, _work)


RETENTION = register(Stage(STAGE, keep_partitions, subject_kind="month", chunk=1))


def cutoff(now: datetime, days: int) -> datetime:
    """Turns said before this instant are expired: the start (UTC) of the day ``days`` days ago."""
    day = (now - timedelta(days=days)).astimezone(UTC)
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def plan_partitions() -> list[int]:
    """The retention pass: make this month's partition and the next ones, then ask for a run for
    each month to drop, trim or move. Returns the runs sent."""
    settings = get_settings()
    now = utcnow()
    wanted: list[tuple[int, str, dict]] = []
    expired: set[int] = set()
    with db.autocommit() as conn:
        partitions.ensure_ahead(conn, now)
        found = partitions.listing(conn)
        if settings.retention_conversations_days:
            before = cutoff(now, settings.retention_conversations_days)
            for p in found:
                if p.end <= before:
                    expired.add(p.month)
                    wanted.append((p.month, DROP, {"action": DROP}))
                elif p.start < before and _holds_before(conn, p, before):
                    params = {"action": TRIM, "before": before.isoformat()}
                    wanted.append((p.month, f"{TRIM}-{before:%Y%m%d}", params))
    warm = settings.warm_tablespace
    if settings.tiering_conversations_warm_days and warm:
        aged = now - timedelta(days=settings.tiering_conversations_warm_days)
        for p in found:
            if p.end <= aged and p.tablespace != warm and p.month not in expired:
                wanted.append((p.month, f"{WARM}-{warm}", {"action": WARM, "tablespace": warm}))
    with db.session() as s:
        runs = [
            ledger.wanted_again(s, RETENTION, month, version, params) for month, version, params in wanted
        ]
    pending = [run.id for run in runs if run.status == PENDING]
    if pending:
        outbox.send(STAGE, pending)
    return pending


def _holds_before(conn, p: partitions.Partition, before: datetime) -> bool:
    statement = sql.SQL("SELECT EXISTS (SELECT FROM {} WHERE ts < %s)").format(sql.Identifier(p.name))
    return conn.execute(statement, (before,)).fetchone()[0]


def _work(run: StageRun) -> None:
    month = partitions.of_month(RETENTION.subject_id(run.subject))
    action = run.params["action"]
    with ledger.leased([run]):
        if action == DROP:
            result = _drop(month)
        elif action == TRIM:
            result = _trim(month, datetime.fromisoformat(run.params["before"]))
        else:
            result = _warm(month, run.params["tablespace"])
    close(run, SUCCEEDED, result=result)


def _drop(month: datetime) -> dict[str, int]:
    name = partitions.name_of(month)
    expired = 0
    with db.autocommit() as conn:
        state = conn.execute(
            "SELECT i.inhdetachpending FROM pg_inherits i WHERE i.inhrelid = to_regclass(%s)", (name,)
        ).fetchone()
        if state is not None:  # still attached, or its detach was interrupted
            how = "FINALIZE" if state[0] else "CONCURRENTLY"
            statement = sql.SQL("ALTER TABLE {} DETACH PARTITION {} " + how)
            conn.execute(statement.format(sql.Identifier(partitions.PARENT), sql.Identifier(name)))
        with conn.transaction():
            if conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0] is not None:
                # The threads' counts and the drop, together: a kill leaves both or neither.
                expired = conn.execute(
                    sql.SQL(
                        """
                        WITH live AS (
                            SELECT namespace, thread_id, count(*) AS n FROM {}
                            WHERE deleted_at IS NULL GROUP BY namespace, thread_id
                        ), counted AS (
                            UPDATE threads t SET turn_count = greatest(t.turn_count - live.n, 0)
                            FROM live WHERE t.namespace = live.namespace AND t.thread_id = live.thread_id
                        )
                        SELECT (SELECT count(*) FROM {})
                        """
                    ).format(sql.Identifier(name), sql.Identifier(name))
                ).fetchone()[0]
                conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(name)))
    keys = _drop_keys(month, partitions.next_month(month))
    log.info("retention dropped %s: %d turns, %d keys", name, expired, keys)
    return {"turns": expired, "keys": keys}


def _drop_keys(start: datetime, end: datetime) -> int:
    batch, total = get_settings().retention_batch, 0
    while True:
        with db.session() as s:
            gone = s.execute(
                text(
                    "DELETE FROM turn_keys WHERE ctid = ANY(ARRAY("
                    "SELECT ctid FROM turn_keys WHERE ts >= :start AND ts < :end LIMIT :n))"
                ),
                {"start": start, "end": end, "n": batch},
            ).rowcount
        total += gone
        if gone < batch:
            return total


TRIM_BATCH = """
WITH gone AS (
    DELETE FROM {partition} WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM {partition} WHERE ts < %(before)s LIMIT %(n)s))
    RETURNING id, namespace, thread_id, agent, msg_id, deleted_at
), keys AS (
    DELETE FROM turn_keys k USING gone g
    WHERE k.namespace = g.namespace AND k.thread_id = g.thread_id AND k.agent = g.agent
      AND k.msg_id = g.msg_id AND k.turn_id = g.id
), live AS (
    SELECT namespace, thread_id, count(*) AS n FROM gone WHERE deleted_at IS NULL
    GROUP BY namespace, thread_id
), counted AS (
    UPDATE threads t SET turn_count = greatest(t.turn_count - live.n, 0)
    FROM live WHERE t.namespace = live.namespace AND t.thread_id = live.thread_id
)
SELECT count(*) FROM gone
"""


def _trim(month: datetime, before: datetime) -> dict[str, int]:
    """The month's turns said before the cutoff, a batch (with their keys and counts) a transaction."""
    name = partitions.name_of(month)
    batch, total = get_settings().retention_batch, 0
    statement = sql.SQL(TRIM_BATCH).format(partition=sql.Identifier(name))
    with db.autocommit() as conn:
        if conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0] is None:
            return {"turns": 0}
        while True:
            with conn.transaction():
                gone = conn.execute(statement, {"before": before, "n": batch}).fetchone()[0]
            total += gone
            if gone < batch:
                break
    log.info("retention trimmed %s: %d turns said before %s", name, total, before.isoformat())
    return {"turns": total}


def _warm(month: datetime, tablespace: str) -> dict[str, str]:
    with db.autocommit() as conn:
        for p in partitions.listing(conn):
            if p.start == month and p.tablespace != tablespace:
                partitions.move(conn, p, tablespace)
                log.info("retention moved %s to tablespace %s", p.name, tablespace)
    return {"tablespace": tablespace}
