"""The status snapshot's database read (``ops.status``): the ledger by stage and status, the
oldest pending run of each stage, the turns embedded lately; bounded by a statement timeout."""

from sqlalchemy import Connection, Row

from models.queries import stage_runs as queries


def bound(conn: Connection, seconds: float) -> None:
    """Bound the statements that follow in this transaction."""
    conn.execute(queries.STATEMENT_TIMEOUT, {"ms": str(int(seconds * 1000))})


def snapshot(conn: Connection) -> Row:
    """(counts by stage and status, oldest pending age by stage, turns embedded in 60 s and 300 s)."""
    return conn.execute(queries.SNAPSHOT).one()
