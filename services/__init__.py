"""Where Loom's PostgreSQL and Redis are: external servers named by ``LOOM_DATABASE_URL`` /
``LOOM_REDIS_URL``, or the embedded ones under ``LOOM_HOME``, started on demand."""

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass

from models import migrate
from models.settings import get_settings
from services import postgres, redis


@dataclass(frozen=True)
class Endpoints:
    database_url: str
    redis_url: str


@contextlib.contextmanager
def running(stop_on_exit: bool = True) -> Iterator[Endpoints]:
    """Yield the endpoints, starting whichever embedded server is not up yet.

    A server this call started is stopped on exit (when ``stop_on_exit``), so a one-off command
    leaves nothing behind, while one started by ``loom up`` is shared and left alone.
    """
    get_settings.cache_clear()  # read the environment as it is now, not as an earlier import saw it
    settings = get_settings()
    started = []
    try:
        database_url = settings.database_url
        if not database_url:
            if postgres.start(settings.home):
                started.append(postgres)
            database_url = postgres.url(settings.home)
            # The embedded database is Loom's own: keep it at the newest schema. External
            # databases are upgraded by their operator (`loom db upgrade`).
            migrate.upgrade(database_url)
        redis_url = settings.redis_url
        if not redis_url:
            if redis.start(settings.home):
                started.append(redis)
            redis_url = redis.url(settings.home)
        # Child processes and lazily built engines/brokers read the settings: make them agree.
        os.environ["LOOM_DATABASE_URL"] = database_url
        os.environ["LOOM_REDIS_URL"] = redis_url
        get_settings.cache_clear()
        yield Endpoints(database_url, redis_url)
    finally:
        if stop_on_exit:
            for server in reversed(started):
                server.stop(settings.home)
