"""The Dramatiq broker: Redis, shared by every worker host. Built on import, before any actor is
declared, so every actor binds to it (import ``workers.broker`` first, as ``workers/__init__`` does)."""

import dramatiq
from dramatiq.brokers.redis import RedisBroker

from models.settings import get_settings


def _build() -> RedisBroker:
    url = get_settings().redis_url
    if not url:
        raise RuntimeError("LOOM_REDIS_URL is not set and no embedded Redis was started")
    # redis-py connects lazily: building the broker needs no live server, so writes still
    # commit while Redis is down (the sweep re-sends their runs later).
    broker = RedisBroker(url=url, socket_connect_timeout=2, socket_timeout=5)
    dramatiq.set_broker(broker)
    return broker


broker = _build()
