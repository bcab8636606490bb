"""Retention and tiering of the monthly partitions of ``turns``: what each month needs, and each
need's work, as plain functions. The stage (``workers/stages/retention.py``) runs a month's need,
counting each batch on its run, and the retention pass (``schedules/retention.py``) asks for them.

``LOOM_RETENTION_CONVERSATIONS_DAYS`` (0 = keep forever) expires turns said before the cutoff (the
start of the day that many days ago): a month wholly before it is detached (concurrently: reads and
writes of other months go on) and dropped, the month holding it is trimmed in batches. The lexical
contexts that held an expired turn's words are rebuilt (``pipelines.contexts``): by each trim
batch, and for a dropped month before its detach, as if its turns were gone already. Embedding
rows have no TTL and stay (see ``pipelines.retire`` and ``pipelines.search`` for what they do
once their turn is gone). Threads keep their rows; their ``turn_count`` drops by the live turns
expired. ``LOOM_TIERING_CONVERSATIONS_WARM_DAYS`` moves months wholly older than that to
``LOOM_WARM_TABLESPACE`` (reads do not change)."""

import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

import psycopg
from psycopg import sql
from sqlalchemy import CursorResult
from sqlmodel import Session

from models import db, partitions
from models.queries import filled
from models.queries import partitions as queries
from pipelines import contexts

DROP, TRIM, WARM = "drop", "trim", "warm"  # a month's needs, the ``action`` of its run

# One detach at a time: PostgreSQL refuses DETACH … CONCURRENTLY while another partition of the
# table is still being detached (two drop runs on two worker threads).
DETACH_LOCK = zlib.crc32(b"loom retention detach")
# DDL waits at most this long for its lock, then the run backs off and tries again, rather than
# queueing every reader of turns behind it while a long transaction (an export) holds the table.
LOCK_TIMEOUT = "5s"


@dataclass(frozen=True)
class Need:
    month: int  # YYYYMM
    version: str  # what its run is asked: drop, trim-<cutoff day> or warm-<tablespace>
    params: dict  # the run's: the action, and the cutoff or the tablespace


def plan(now: datetime, *, keep_days: int, warm_days: int, warm_tablespace: str | None) -> list[Need]:
    """This month's partition and the next ones made; then what each month needs: a month wholly
    before the cutoff of ``keep_days`` (0: none) dropped, the month holding it trimmed while it holds
    turns said before it, a month wholly older than ``warm_days`` (0: none) and not dropped moved to
    ``warm_tablespace`` (None: none)."""
    wanted: list[Need] = []
    expired: set[int] = set()
    with db.autocommit() as conn:
        partitions.ensure_ahead(conn, now)
        found = partitions.listing(conn)
        if keep_days:
            before = partitions.retention_cutoff(now, keep_days)
            for p in found:
                if p.end <= before:
                    expired.add(p.month)
                    wanted.append(Need(p.month, DROP, {"action": DROP}))
                elif p.start < before and _holds_before(conn, p, before):
                    params = {"action": TRIM, "before": before.isoformat()}
                    wanted.append(Need(p.month, f"{TRIM}-{before:%Y%m%d}", params))
    if warm_days and warm_tablespace:
        aged = now - timedelta(days=warm_days)
        for p in found:
            if p.end <= aged and p.tablespace != warm_tablespace and p.month not in expired:
                params = {"action": WARM, "tablespace": warm_tablespace}
                wanted.append(Need(p.month, f"{WARM}-{warm_tablespace}", params))
    return wanted


def _holds_before(conn: psycopg.Connection, p: partitions.Partition, before: datetime) -> bool:
    statement = queries.HOLDS_BEFORE.format(partition=sql.Identifier(p.name))
    row = conn.execute(statement, (before,)).fetchone()
    assert row is not None  # a SELECT of one value answers one row
    return row[0]


def detach(month: datetime) -> None:
    """The month's partition detached from turns, if it still is; a detach a kill interrupted is
    finalised."""
    name = partitions.name_of(month)
    with db.autocommit() as conn:
        conn.execute(queries.LOCK_DETACHES, (DETACH_LOCK,))
        conn.execute(queries.SET_LOCK_TIMEOUT.format(timeout=sql.Literal(LOCK_TIMEOUT)))
        try:
            state = conn.execute(queries.DETACH_STATE, (name,)).fetchone()
            if state is not None:  # still attached, or its detach was interrupted
                statement = queries.FINALIZE_DETACH if state[0] else queries.DETACH
                conn.execute(
                    statement.format(parent=sql.Identifier(partitions.PARENT), partition=sql.Identifier(name))
                )
        finally:
            conn.execute(queries.RESET_LOCK_TIMEOUT)
            conn.execute(queries.UNLOCK_DETACHES, (DETACH_LOCK,))


def exists(s: Session, month: datetime) -> bool:
    """Whether the month's partition is still there (attached or detached, not yet dropped)."""
    return s.execute(queries.TABLE, {"name": partitions.name_of(month)}).scalar_one() is not None


def drop(s: Session, month: datetime) -> int:
    """The month's (detached) partition dropped in the caller's transaction, with its threads'
    counts; how many turns it held (0 once dropped)."""
    if not exists(s, month):
        return 0
    partition = queries.quoted(partitions.name_of(month))
    expired = s.execute(filled(queries.DROP_COUNTS, partition=partition)).scalar_one()
    s.execute(filled(queries.DROP_PARTITION, partition=partition))
    return expired


def forget_keys(s: Session, month: datetime, n: int) -> int:
    """A batch of at most ``n`` keys of the month's turns deleted; how many."""
    params = {"start": month, "end": partitions.next_month(month), "n": n}
    # a text() DELETE: its result is a CursorResult, which the types of a text clause cannot tell
    return cast(CursorResult, s.execute(queries.FORGET_KEYS, params)).rowcount


def trim(s: Session, month: datetime, before: datetime, n: int) -> int:
    """A batch of at most ``n`` of the month's turns said before ``before`` deleted, with their keys
    and their threads' counts and contexts; how many. The threads' rows are locked before their
    turns (``contexts.lock``)."""
    partition = queries.quoted(partitions.name_of(month))
    chosen = s.execute(filled(queries.TRIM_CHOICE, partition=partition), {"before": before, "n": n}).all()
    contexts.lock(s, [(namespace, thread_id) for _, namespace, thread_id in chosen])
    ids = [turn_id for turn_id, _, _ in chosen]
    statement = filled(queries.TRIM_BATCH, partition=partition)
    n, namespaces, thread_ids = s.execute(statement, {"before": before, "ids": ids}).one()
    contexts.rebuild(s, zip(namespaces, thread_ids, strict=True), expired_before=before)
    return n


def forget_contexts(s: Session, month: datetime, threads: list[tuple[str, str]]) -> int:
    """Before the month's partition is detached: these threads' contexts (of the month's threads)
    rebuilt as if its turns were gone already, so that none of their words outlives them in a
    later turn's context; how many turns changed."""
    return contexts.rebuild(s, threads, expired_before=partitions.next_month(month))


def warm(month: datetime, tablespace: str) -> list[str]:
    """The month's partition (and its indexes) moved to ``tablespace`` unless there already; the
    partitions moved."""
    moved = []
    with db.autocommit() as conn:
        for p in partitions.listing(conn):
            if p.start == month and p.tablespace != tablespace:
                partitions.move(conn, p, tablespace, LOCK_TIMEOUT)
                moved.append(p.name)
    return moved
