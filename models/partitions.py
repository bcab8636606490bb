"""The monthly partitions of ``turns`` (migration 0011): ``turns_pYYYY_MM`` holds the turns whose
``ts`` falls in that UTC month. The retention pass creates the months ahead; a write of a turn
said in a month that has none yet (imported history) creates it on the spot (``ensure``).

Functions take a psycopg connection in autocommit (``models.db.autocommit``): each DDL statement is
its own short transaction, and ``ensure`` takes an advisory lock so two writers of the same new
month do not race."""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import psycopg
from psycopg import sql

from models.queries import partitions as queries

PARENT = "turns"
MONTHS_AHEAD = 2
_NAME = re.compile(r"turns_p(\d{4})_(\d{2})")


@dataclass(frozen=True)
class Partition:
    name: str
    start: datetime  # first instant of its month, UTC
    end: datetime  # first instant of the next month
    tablespace: str | None  # None: the database's default

    @property
    def month(self) -> int:
        """YYYYMM, the number stage runs name it by."""
        return self.start.year * 100 + self.start.month


def month_start(moment: datetime) -> datetime:
    moment = moment.astimezone(UTC)
    return datetime(moment.year, moment.month, 1, tzinfo=UTC)


def next_month(month: datetime) -> datetime:
    return month.replace(year=month.year + month.month // 12, month=month.month % 12 + 1)


def of_month(yyyymm: int) -> datetime:
    return datetime(yyyymm // 100, yyyymm % 100, 1, tzinfo=UTC)


def name_of(month: datetime) -> str:
    return f"{PARENT}_p{month:%Y_%m}"


def retention_cutoff(now: datetime, days: int) -> datetime:
    """Turns said before this instant are expired: the start (UTC) of the day ``days`` days ago."""
    day = (now - timedelta(days=days)).astimezone(UTC)
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def ensure(conn: psycopg.Connection, moment: datetime) -> None:
    """The partition that holds ``moment`` exists afterwards."""
    month = month_start(moment)
    with conn.transaction():
        conn.execute(queries.LOCK_MONTH, (zlib.crc32(name_of(month).encode()),))
        conn.execute(
            queries.CREATE_MONTH.format(
                partition=sql.Identifier(name_of(month)),
                parent=sql.Identifier(PARENT),
                start=sql.Literal(month.isoformat()),
                end=sql.Literal(next_month(month).isoformat()),
            )
        )


def ensure_ahead(conn: psycopg.Connection, now: datetime) -> None:
    """This month's partition and the next ``MONTHS_AHEAD``."""
    month = month_start(now)
    for _ in range(MONTHS_AHEAD + 1):
        ensure(conn, month)
        month = next_month(month)


def listing(conn: psycopg.Connection) -> list[Partition]:
    """The partitions of turns, oldest first."""
    rows = conn.execute(queries.LISTING, (PARENT,)).fetchall()
    found = []
    for name, tablespace in rows:
        if m := _NAME.fullmatch(name):
            start = datetime(int(m[1]), int(m[2]), 1, tzinfo=UTC)
            found.append(Partition(name, start, next_month(start), tablespace))
    return sorted(found, key=lambda p: p.start)


def move(conn: psycopg.Connection, partition: Partition, tablespace: str, lock_timeout: str) -> None:
    """Move a partition and its indexes to ``tablespace``. Each is rewritten under an exclusive lock
    on that partition: a read that touches it (any read not limited to other months by ``ts``) waits
    for the copy. The lock is waited for at most ``lock_timeout``."""
    with conn.transaction():
        conn.execute(queries.LOCK_TIMEOUT.format(timeout=sql.Literal(lock_timeout)))
        into = sql.Identifier(tablespace)
        conn.execute(queries.MOVE_TABLE.format(partition=sql.Identifier(partition.name), tablespace=into))
        for (index,) in conn.execute(queries.INDEXES_OF, (partition.name,)).fetchall():
            conn.execute(queries.MOVE_INDEX.format(index=sql.Identifier(index), tablespace=into))
