"""Where Loom's PostgreSQL and Redis are: external servers named by ``LOOM_DATABASE_URL`` /
``LOOM_REDIS_URL``, or the embedded ones under ``LOOM_HOME``.

What a command may do when they are stopped depends on what it needs (``running(start=...)``):
``loom up`` starts both (``"all"``); a command that touches nothing but the database may start the
embedded PostgreSQL for its own time (``"database"``); one that needs the running system (the
workers, the broker) refuses in one line, exit 75 (``None``). Only ``loom up`` and the commands
that make a database (``create``: ``loom db upgrade``, ``loom restore``) create a data directory:
any other command run where none exists says where it looked, in one line, exit 2, so that a shell
without the server's ``LOOM_HOME`` never makes a second Loom.
"""

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Final, Literal

import psycopg
import redis as redis_client
from sqlalchemy.engine import make_url

from models import db, migrate
from models.settings import get_settings
from services import postgres, privacy, redis, supervisor

ALL: Final = "all"  # Final keeps the literal type, so `running(start=ALL)` checks
DATABASE: Final = "database"
Start = Literal["all", "database"] | None

NOT_RUNNING = "Loom is not running (start it with loom up, or set LOOM_DATABASE_URL/LOOM_REDIS_URL)"


@dataclass(frozen=True)
class Endpoints:
    database_url: str
    redis_url: str
    # The command started an embedded server itself: no `loom up` serves this data directory.
    started_here: bool = False


TEMPFAIL = 75  # sysexits' EX_TEMPFAIL: a script (a capture hook) keeps its input and tries later


class NotRunning(SystemExit):
    """A server the command needs does not answer: ``running`` has printed why (one line on
    stderr) and the command ends with exit code 75, so a script can tell "try again later" from
    "this input is refused" (2)."""

    def __init__(self) -> None:
        super().__init__(TEMPFAIL)


class Unavailable(RuntimeError):
    """Why a server the command needs cannot be reached, in one line."""


def no_data_directory(settings, start: Start) -> str | None:
    """Why the data directory of the embedded servers a command needs is missing (None when it is
    there, or when the command needs none: its servers are configured)."""
    if settings.database_url:
        if settings.redis_url or start == DATABASE or settings.home.is_dir():
            return None
    elif postgres.initialized(settings.home):
        return None
    named = "LOOM_HOME" if "LOOM_HOME" in os.environ else "LOOM_HOME is not set: the default"
    return (
        f"no Loom data directory at {settings.home} ({named}); run this with the LOOM_HOME of the "
        "running `loom up`, or set LOOM_DATABASE_URL and LOOM_REDIS_URL to its servers"
    )


@contextlib.contextmanager
def running(start: Start = ALL, stop_on_exit: bool = True, create: bool = False) -> Iterator[Endpoints]:
    """Yield the endpoints once the servers the command needs answer.

    ``start="all"`` (``loom up``) starts whichever embedded server is not up; ``"database"`` starts
    only the embedded PostgreSQL, for a command that touches nothing else; ``None`` starts nothing.
    A server that is needed and does not answer (and may not be started) ends the command:
    ``error: …`` on stderr, exit code 75. A server this call started is stopped on exit (when
    ``stop_on_exit``); one that was already running (``loom up``'s) is left alone. Where the data
    directory is missing, only ``start="all"`` and ``create`` make one; else one line, exit 2.
    """
    get_settings.cache_clear()  # read the environment as it is now, not as an earlier import saw it
    settings = get_settings()
    if start == ALL or create:
        settings.home.mkdir(parents=True, exist_ok=True)
    elif missing := no_data_directory(settings, start):
        print(f"error: {missing}", file=sys.stderr)
        raise SystemExit(2)
    privacy.keep_private(settings.home)
    started: list[ModuleType] = []
    try:
        try:
            database_url, redis_url = _reach(settings, start, started)
        except (Unavailable, postgres.StartError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise NotRunning() from None
        db.configure(database_url)  # the broker is the caller's to set up (workers.broker.setup)
        yield Endpoints(database_url, redis_url, started_here=bool(started))
    finally:
        # `loom up` (start="all") owns what it started; a one-off command leaves it to a `loom up`.
        if stop_on_exit and (start == ALL or not supervisor.supervising(settings.home / "run")):
            for server in reversed(started):
                server.stop(settings.home)


def _reach(settings, start: Start, started: list[ModuleType]) -> tuple[str, str]:
    home = settings.home
    embedded_database = not settings.database_url
    embedded_redis = not settings.redis_url
    if start is None and (
        (embedded_database and not postgres.alive(home)) or (embedded_redis and not redis.alive(home))
    ):
        raise Unavailable(NOT_RUNNING)  # the embedded servers are `loom up`'s: it is not running

    if embedded_database:
        if start is not None and postgres.start(home):
            started.append(postgres)
        database_url = postgres.url(home)
    else:
        database_url = settings.database_url
    _check_database(database_url, "" if embedded_database else " (LOOM_DATABASE_URL)")
    if embedded_database and (start == ALL or postgres in started):
        # The embedded database is Loom's own: kept at the newest schema by the processes that
        # serve it and by a command that had to start it (a one-off command meeting `loom up`'s
        # database finds it migrated). External databases are upgraded by their operator
        # (`loom db upgrade`).
        migrate.upgrade(database_url)

    if embedded_redis:
        try:
            if start == ALL and redis.start(home):
                started.append(redis)
        except (OSError, RuntimeError, redis_client.RedisError, subprocess.SubprocessError) as exc:
            raise Unavailable(f"the embedded Redis did not start: {_one_line(exc)}") from exc
        redis_url = redis.url(home)
    else:
        redis_url = settings.redis_url
    if start != DATABASE:
        _check_redis(redis_url, "" if embedded_redis else " (LOOM_REDIS_URL)")
    return database_url, redis_url


def _check_database(url: str, source: str) -> None:
    parsed = make_url(url)
    try:
        psycopg.connect(db.libpq_url(url), connect_timeout=5).close()
    except psycopg.Error as exc:
        where = f"{parsed.host or 'localhost'}:{parsed.port or 5432}"
        raise Unavailable(f"PostgreSQL at {where}{source} does not answer: {_one_line(exc)}") from exc


def _check_redis(url: str, source: str) -> None:
    client = redis_client.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=5)
    try:
        client.ping()
    except redis_client.RedisError as exc:
        kwargs = client.connection_pool.connection_kwargs
        where = f"{kwargs.get('host', kwargs.get('path'))}:{kwargs.get('port', '')}".rstrip(":")
        raise Unavailable(f"Redis at {where}{source} does not answer: {_one_line(exc)}") from exc
    finally:
        client.close()


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def masked(url: str) -> str:
    """The URL to show a person: the password replaced by ``***`` (redis:// URLs parse too)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not a URL at all: show nothing of it
        return "(unparsable URL)"


def embedded_in_use(endpoints: Endpoints) -> list[ModuleType]:
    """The embedded servers among the endpoints (``loom up`` restarts these)."""
    home = get_settings().home
    return [
        server
        for server, used in ((postgres, endpoints.database_url), (redis, endpoints.redis_url))
        if used == server.url(home)
    ]
