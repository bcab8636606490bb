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
import zlib
from datetime import datetime, timedelta

from psycopg import sql
from sqlalchemy import text

from models import db, partitions
from models.base import utcnow
from models.settings import get_settings
from models.stage_run import PENDING, SUCCEEDED, StageRun
from workers import ledger, outbox
from workers.bodies import close, one_at_a_time
from workers.stages import Stage, register

log = logging.getLogger(__name__)

STAGE = "retention"
DROP, TRIM, WARM = "drop", "trim", "warm"


def keep_partitions(run_ids: list[int]) -> None:
    one_at_a_time(RETENTION, run_ids, _work)


RETENTION = register(Stage(STAGE, keep_partitions, subject_kind="month", chunk=1))


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
            before = partitions.retention_cutoff(now, settings.retention_conversations_days)
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
            _drop(run, month)
        elif action == TRIM:
            _trim(run, month, datetime.fromisoformat(run.params["before"]))
        else:
            _warm(month, run.params["tablespace"])
    close(run, SUCCEEDED, keep_result=True)  # the counts each step added as it went


# One detach at a time: PostgreSQL refuses DETACH … CONCURRENTLY while another partition of the
# table is still being detached (two drop runs on two worker threads).
DETACH_LOCK = zlib.crc32(b"loom retention detach")
# DDL waits at most this long for its lock, then the run backs off and tries again, rather than
# queueing every reader of turns behind it while a long transaction (an export) holds the table.
LOCK_TIMEOUT = "5s"


def _drop(run: StageRun, month: datetime) -> None:
    name = partitions.name_of(month)
    with db.autocommit() as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (DETACH_LOCK,))
        conn.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
        try:
            state = conn.execute(
                "SELECT i.inhdetachpending FROM pg_inherits i WHERE i.inhrelid = to_regclass(%s)", (name,)
            ).fetchone()
            if state is not None:  # still attached, or its detach was interrupted
                how = "FINALIZE" if state[0] else "CONCURRENTLY"
                statement = sql.SQL("ALTER TABLE {} DETACH PARTITION {} " + how)
                conn.execute(statement.format(sql.Identifier(partitions.PARENT), sql.Identifier(name)))
        finally:
            conn.execute("RESET lock_timeout")
            conn.execute("SELECT pg_advisory_unlock(%s)", (DETACH_LOCK,))
    quoted = f'"{name}"'  # turns_pYYYY_MM: digits and letters only
    with db.session() as s:
        if s.execute(text("SELECT to_regclass(:name)"), {"name": name}).scalar_one() is not None:
            # The threads' counts, the drop and its count, together: a kill leaves all or none.
            expired = s.execute(text(DROP_COUNTS.format(partition=quoted))).scalar_one()
            s.execute(text(f"DROP TABLE {quoted}"))
            ledger.add_to_result(s, run.id, {"turns": expired})
    start, end = month, partitions.next_month(month)
    while _keys_batch(run, start, end) == get_settings().retention_batch:
        pass
    log.info("retention dropped %s", name)


DROP_COUNTS = """
WITH live AS (
    SELECT namespace, thread_id, count(*) AS n FROM {partition}
    WHERE deleted_at IS NULL GROUP BY namespace, thread_id
), counted AS (
    UPDATE threads t SET turn_count = greatest(t.turn_count - live.n, 0)
    FROM live WHERE t.namespace = live.namespace AND t.thread_id = live.thread_id
)
SELECT count(*) FROM {partition}
"""


def _keys_batch(run: StageRun, start: datetime, end: datetime) -> int:
    with db.session() as s:
        gone = s.execute(
            text(
                "DELETE FROM turn_keys WHERE ctid = ANY(ARRAY("
                "SELECT ctid FROM turn_keys WHERE ts >= :start AND ts < :end LIMIT :n))"
            ),
            {"start": start, "end": end, "n": get_settings().retention_batch},
        ).rowcount
        ledger.add_to_result(s, run.id, {"keys": gone})
    return gone


TRIM_BATCH = """
WITH gone AS (
    DELETE FROM {partition} WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM {partition} WHERE ts < :before LIMIT :n))
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


def _trim(run: StageRun, month: datetime, before: datetime) -> None:
    """The month's turns said before the cutoff, a batch (with their keys and counts) a transaction."""
    name = partitions.name_of(month)
    with db.session() as s:
        if s.execute(text("SELECT to_regclass(:name)"), {"name": name}).scalar_one() is None:
            return
    while _trim_batch(run, name, before) == get_settings().retention_batch:
        pass
    log.info("retention trimmed %s of the turns said before %s", name, before.isoformat())


def _trim_batch(run: StageRun, name: str, before: datetime) -> int:
    with db.session() as s:
        statement = text(TRIM_BATCH.format(partition=f'"{name}"'))
        gone = s.execute(statement, {"before": before, "n": get_settings().retention_batch}).scalar_one()
        ledger.add_to_result(s, run.id, {"turns": gone})
    return gone


def _warm(month: datetime, tablespace: str) -> None:
    with db.autocommit() as conn:
        for p in partitions.listing(conn):
            if p.start == month and p.tablespace != tablespace:
                partitions.move(conn, p, tablespace, LOCK_TIMEOUT)
                log.info("retention moved %s to tablespace %s", p.name, tablespace)
