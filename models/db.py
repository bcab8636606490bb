"""The engine and short-lived sessions. One engine a process, built on first use."""

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from sqlalchemy import Engine
from sqlmodel import Session, create_engine

from models.settings import get_settings


@lru_cache
def get_engine() -> Engine:
    url = get_settings().database_url
    if not url:
        raise RuntimeError("LOOM_DATABASE_URL is not set and no embedded PostgreSQL was started")
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10)


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
