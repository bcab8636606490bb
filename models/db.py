"""The engine and short-lived sessions. One engine a process, built on first use, on the database
the process set up at its start (``configure``: ``services.running`` does, with the server it
found) or, failing that, ``LOOM_DATABASE_URL``."""

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import lru_cache

import psycopg
from psycopg import sql
from sqlalchemy import Engine, exc, make_url
from sqlmodel import Session, create_engine

import models.tables  # noqa: F401  every table registered before a session maps one
from models.queries import embeddings, stage_runs
from models.settings import get_settings

_configured: str | None = None


def configure(url: str) -> None:
    """Point this process at the database ``url`` (an engine built before is forgotten)."""
    global _configured
    if url != _configured:
        reset_engine()
        _configured = url


def url() -> str:
    """The database this process uses."""
    found = _configured or get_settings().database_url
    if not found:
        raise RuntimeError("LOOM_DATABASE_URL is not set and no embedded PostgreSQL was started")
    return found


@lru_cache
def get_engine() -> Engine:
    # A server that accepts no connection must fail a request in seconds, not hang it.
    return create_engine(
        url(), pool_pre_ping=True, pool_size=10, max_overflow=10, connect_args={"connect_timeout": 5}
    )


@asynccontextmanager
async def notifications(channel: str) -> AsyncIterator[AsyncIterator[str]]:
    """The payloads NOTIFY sends on ``channel``, from a connection of their own that listens while
    the block runs (psycopg errors when the database goes away)."""
    async with await psycopg.AsyncConnection.connect(libpq_url(), autocommit=True, connect_timeout=5) as conn:
        await conn.execute(stage_runs.LISTEN.format(channel=sql.Identifier(channel)))
        yield (note.payload async for note in conn.notifies())


def libpq_url(of: str | None = None) -> str:
    """A database URL (by default this process's) as libpq takes it: no ``+driver``."""
    return make_url(of or url()).set(drivername="postgresql").render_as_string(hide_password=False)


def unavailable(error: BaseException | None) -> bool:
    """The error says the database cannot be reached now (down, restarting, the connection lost),
    as opposed to a statement it refused (a deadlock, a cancelled query, a full disk: psycopg
    files those under OperationalError too): worth a retry later, not a bug."""
    if isinstance(error, exc.TimeoutError):  # no pooled connection came free in time
        return True
    if isinstance(error, exc.DBAPIError):
        if error.connection_invalidated:
            return True
        error = error.orig
    if not isinstance(error, psycopg.OperationalError):
        return False
    # No SQLSTATE: the client could not connect or lost the connection. 08: connection
    # exceptions. 57P01-03: the server is shutting down, crashed or is starting up.
    return error.sqlstate is None or error.sqlstate.startswith("08") or error.sqlstate in _GONE


_GONE = {"57P01", "57P02", "57P03"}


def reset_engine() -> None:
    """Forget the engine (tests point the process at another database)."""
    if get_engine.cache_info().currsize:
        get_engine().dispose()
    get_engine.cache_clear()


@contextmanager
def session() -> Iterator[Session]:
    """A short unit of work: commits on success, rolls back on error. Never hold one across a
    provider call."""
    with Session(get_engine(), expire_on_commit=False) as s:
        try:
            yield s
            s.commit()
        except BaseException:
            s.rollback()
            raise


@contextmanager
def autocommit() -> Iterator[psycopg.Connection]:
    """A pooled connection's own psycopg connection in autocommit, for a hot path that writes with
    one statement (a statement is its own transaction): no ORM session, no BEGIN and COMMIT round
    trips. conversation.append's write costs ~0.3 ms of client CPU this way against ~1.2 ms for
    its two statements through a session (measured in-process; the API's whole append went from
    3.8 to 2.1 ms, bench/README)."""
    pooled, conn = _autocommit_connection()
    try:
        yield conn
    finally:
        try:
            if not (conn.broken or conn.closed):
                conn.autocommit = False  # the pool's other users expect transactions
        except psycopg.Error:
            pass
        if conn.broken or conn.closed or conn.autocommit:
            pooled.invalidate()  # the pool must not hand it out again
        pooled.close()


def _autocommit_connection():
    """A pooled connection switched to autocommit. One the server dropped while it sat in the pool
    can pass the pool's ping yet refuse the switch (its socket closed, its state left ACTIVE): it is
    thrown away and the next one taken."""
    pooled = get_engine().raw_connection()
    try:
        pooled.driver_connection.autocommit = True
        return pooled, pooled.driver_connection
    except psycopg.Error:
        pooled.invalidate()
        pooled.close()
    pooled = get_engine().raw_connection()
    pooled.driver_connection.autocommit = True
    return pooled, pooled.driver_connection


def vector_width() -> int | None:
    """The width the ``embeddings.vector`` column was migrated with (None before the first
    migration). One column holds one width: a model of another width cannot share it."""
    with session() as s:
        return s.scalar(embeddings.VECTOR_WIDTH)
