"""Ports of the embedded servers, chosen once per data directory and kept in ``ports.json``.

Keeping the port stable lets every ``loom`` command started against the same ``LOOM_HOME`` find
the servers ``loom up`` started.
"""

import contextlib
import fcntl
import json
import socket
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_for(home: Path, name: str) -> int:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "ports.json"
    # Several `loom` processes may start at once on one home: choose each port under a lock.
    with open(home / "ports.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ports = json.loads(path.read_text()) if path.exists() else {}
        if name not in ports:
            ports[name] = free_port()
            path.write_text(json.dumps(ports, indent=2))
        return ports[name]


def is_listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def locked(home: Path, server: str) -> Iterator[None]:
    """One start or stop of ``server`` at a time per data directory (`loom up` restarting it while
    a one-off command starts it, say)."""
    home.mkdir(parents=True, exist_ok=True)
    with open(home / f"{server}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
