"""Named SQL of the monthly partitions of turns as retention works on them (``pipelines.retention``):
whether a month holds turns said before the cutoff, its detach and drop with its threads' counts,
its trim, and the keys of its turns. ``models.partitions`` makes, lists and moves the partitions.

A partition is named in a statement, never bound, so the statements that name one are templates.
Those run on psycopg's own connection in autocommit (DDL: each its own transaction) are
``psycopg.sql`` compositions whose ``{partition}`` (and ``{parent}``) is formatted with
``sql.Identifier``; those run in a session, whose counts go with the ledger's in one transaction,
are text templates (``models.queries.filled``) whose ``{partition}`` is ``quoted(name)``."""

from psycopg import sql
from sqlalchemy import text


def quoted(name: str) -> str:
    """A partition's name as the text templates' ``{partition}``: quoted as an identifier."""
    return sql.Identifier(name).as_string()


# --- on psycopg's connection: the retention pass, the detach -------------------------------------

# The pass asks for a trim of the month holding the cutoff only while it holds turns said before.
HOLDS_BEFORE = sql.SQL("SELECT EXISTS (SELECT FROM {partition} WHERE ts < %s)")

# One detach at a time (pipelines.retention.DETACH_LOCK): PostgreSQL refuses DETACH … CONCURRENTLY
# while another partition of the table is still being detached. A session lock, held across the
# detach's own transactions.
LOCK_DETACHES = "SELECT pg_advisory_lock(%s)"
UNLOCK_DETACHES = "SELECT pg_advisory_unlock(%s)"

# The detach's DDL waits at most this long for its lock (for this session, until reset).
SET_LOCK_TIMEOUT = sql.SQL("SET lock_timeout = {timeout}")
RESET_LOCK_TIMEOUT = "RESET lock_timeout"

# Whether the partition is still attached (a row) and whether its detach was interrupted
# (``inhdetachpending``: a kill between DETACH … CONCURRENTLY's two transactions).
DETACH_STATE = "SELECT i.inhdetachpending FROM pg_inherits i WHERE i.inhrelid = to_regclass(%s)"

# Detached concurrently: reads and writes of other months go on. An interrupted one is finalised.
DETACH = sql.SQL("ALTER TABLE {parent} DETACH PARTITION {partition} CONCURRENTLY")
FINALIZE_DETACH = sql.SQL("ALTER TABLE {parent} DETACH PARTITION {partition} FINALIZE")

# --- in a session: the drop, the trim, the keys ---------------------------------------------------

# The partition's table, or NULL once dropped (a detached partition is no longer in pg_inherits).
TABLE = text("SELECT to_regclass(:name)")

# Before the drop, in its transaction: the threads count the partition's live turns no more; answers
# how many turns it held (the run's count).
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
DROP_PARTITION = "DROP TABLE {partition}"

# After a drop, a batch (:n) of the keys of the month's turns, found by their ts (ix_turn_keys_ts,
# migration 0011): turn_keys is not partitioned, so the drop does not take them.
FORGET_KEYS = text(
    "DELETE FROM turn_keys WHERE ctid = ANY(ARRAY("
    "SELECT ctid FROM turn_keys WHERE ts >= :start AND ts < :end LIMIT :n))"
)

# A batch (:n) of the month's turns said before the cutoff (:before): their ids and threads, whose
# rows the caller locks before TRIM_BATCH deletes them (a thread's row before its turns, as a
# delete locks them).
TRIM_CHOICE = """
SELECT id, namespace, thread_id FROM {partition} WHERE ts < :before LIMIT :n
"""

# The chosen turns (:ids) still there deleted, with their keys and their threads' counts, in one
# statement; answers how many, and the threads that lost live turns (namespaces and thread ids,
# pairs: the caller rebuilds their contexts).
TRIM_BATCH = """
WITH gone AS (
    DELETE FROM {partition} WHERE id = ANY(:ids) AND ts < :before
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
SELECT (SELECT count(*) FROM gone), coalesce(array_agg(namespace), ARRAY[]::text[]),
       coalesce(array_agg(thread_id), ARRAY[]::text[])
FROM live
"""


# --- making, listing and moving partitions (models.partitions) ------------------------------------

# Two writers making the same month wait on each other (a transaction lock keyed by its name's
# CRC-32) instead of racing CREATE TABLE IF NOT EXISTS.
LOCK_MONTH = "SELECT pg_advisory_xact_lock(%s)"

# A month's partition of turns, [start, next month).
CREATE_MONTH = sql.SQL(
    "CREATE TABLE IF NOT EXISTS {partition} PARTITION OF {parent} FOR VALUES FROM ({start}) TO ({end})"
)

# The partitions of the parent table, with their tablespace (NULL: the database's default).
LISTING = """
SELECT c.relname, t.spcname
FROM pg_inherits i
JOIN pg_class c ON c.oid = i.inhrelid
LEFT JOIN pg_tablespace t ON t.oid = c.reltablespace
WHERE i.inhparent = %s::regclass
"""

# Moving a partition rewrites it under an exclusive lock: waited for at most {timeout}.
LOCK_TIMEOUT = sql.SQL("SET LOCAL lock_timeout = {timeout}")
MOVE_TABLE = sql.SQL("ALTER TABLE {partition} SET TABLESPACE {tablespace}")
INDEXES_OF = (
    "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = %s::regclass"
)
MOVE_INDEX = sql.SQL("ALTER INDEX {index} SET TABLESPACE {tablespace}")
