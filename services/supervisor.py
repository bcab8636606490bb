"""``loom up``: run the API, a worker and the scheduler as child processes, watch the embedded
PostgreSQL and Redis, restart whatever dies (with backoff), and stop it all on SIGINT/SIGTERM."""

import contextlib
import fcntl
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from services import logs, stopping

log = logging.getLogger(__name__)

# The one `loom up` of a data directory holds an exclusive lock on this file (its pid in it) while
# it runs; the kernel releases the lock when the process dies, so a dead one's file is taken over.
UP_PID = "up.pid"


class AlreadyRunning(RuntimeError):
    """Another `loom up` serves this data directory."""


@contextlib.contextmanager
def claimed(run_dir: Path) -> Iterator[None]:
    """This process is the data directory's `loom up` while the block runs, or AlreadyRunning."""
    run_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(run_dir / UP_PID, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise AlreadyRunning(f"Loom is already running from this data directory, pid {pid}") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        try:
            yield
        finally:
            # Emptied, never removed: another start may already hold the file open to lock it.
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # and the lock with it


def supervising(run_dir: Path) -> bool:
    """A `loom up` of this data directory is running (it holds the lock)."""
    try:
        fd = os.open(run_dir / UP_PID, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


CHILDREN = ("api", "worker", "scheduler")
WATCH_SECONDS = 0.5  # how often a server and the children are looked at
STACKS_SECONDS = 1.0  # for a child that did not stop to print its stacks before it is killed


class Backoff:
    """The pause before restarting something that died: ``first``, doubled at each death that
    came soon after the last start, up to ``cap``; back to ``first`` after ``stable_after`` seconds
    of running (or a ``reset``). A child that refuses at once while a server restarts must not spin."""

    def __init__(self, first: float = 1.0, cap: float = 8.0, stable_after: float = 30.0) -> None:
        self.first, self.cap, self.stable_after = first, cap, stable_after
        self._next = first

    def after_exit(self, ran_for: float) -> float:
        if ran_for >= self.stable_after:
            self._next = self.first
        delay = self._next
        self._next = min(self._next * 2, self.cap)
        return delay

    def reset(self) -> None:
        self._next = self.first


class _Child:
    def __init__(self, name: str) -> None:
        self.name = name
        self.proc: subprocess.Popen | None = None
        self.started_at = 0.0
        self.restart_at: float | None = None
        self.backoff = Backoff()


class Supervisor:
    def __init__(self, run_dir: Path, servers: list[ModuleType], api_socket: socket.socket) -> None:
        """``servers``: the embedded servers to keep running (``services.postgres``,
        ``services.redis``: ``services.embedded_in_use``); ``api_socket``: the API's listening
        socket (``services.listener``), handed to each API process."""
        self.run_dir = run_dir
        self.api_socket = api_socket
        self.home = run_dir.parent
        self.servers = servers
        self.children = {name: _Child(name) for name in CHILDREN}
        self.stopping = threading.Event()

    @property
    def procs(self) -> dict[str, subprocess.Popen]:
        return {name: c.proc for name, c in self.children.items() if c.proc is not None}

    def _spawn(self, child: _Child) -> None:
        command = [sys.executable, "-m", "cli", child.name]
        fds: tuple[int, ...] = ()
        if child.name == "api":
            fds = (self.api_socket.fileno(),)
            command += ["--fd", str(fds[0])]
        # A process group of its own: Ctrl-C in the terminal reaches `loom up` alone, which then
        # stops each child with one SIGTERM (two signals raced the child's own stop).
        # It stops by itself should this process die without stopping it (``stopping``).
        env = {**os.environ, stopping.SUPERVISOR: str(os.getpid())}
        child.proc = subprocess.Popen(command, pass_fds=fds, process_group=0, env=env)
        child.started_at = time.monotonic()
        child.restart_at = None
        # Operators (and the kill test) find each child's pid here.
        (self.run_dir / f"{child.name}.pid").write_text(str(child.proc.pid))

    def run(self) -> int:
        stopping.on_stop(self.stopping.set)
        watchers = [
            threading.Thread(target=self._watch, args=(server,), name=f"watch-{_name(server)}", daemon=True)
            for server in self.servers
        ]
        for watcher in watchers:
            watcher.start()
        for child in self.children.values():
            self._spawn(child)
        while not self.stopping.wait(WATCH_SECONDS):
            self._look_after_children()
        log.info("stopping: the runs in flight finish or are handed back", extra=logs.SHOWN)
        for watcher in watchers:
            watcher.join(90)  # a restart under way ends first (pg_ctl waits at most 60 s)
        clean = self._stop_all()
        log.info("stopped" if clean else "stopped, not cleanly (see above)", extra=logs.SHOWN)
        return 0 if clean else 1

    def _look_after_children(self) -> None:
        now = time.monotonic()
        for child in self.children.values():
            if child.proc is None or child.proc.poll() is None:
                continue
            if child.restart_at is None:
                delay = child.backoff.after_exit(now - child.started_at)
                child.restart_at = now + delay
                log.warning(
                    "%s exited with %s; restarting it in %.0fs", child.name, child.proc.returncode, delay
                )
            elif now >= child.restart_at:
                self._spawn(child)

    def _watch(self, server: ModuleType) -> None:
        """Start ``server`` again whenever it is found dead, with backoff while it will not start."""
        name = _name(server)
        backoff = Backoff(first=0.5, cap=8.0)
        while not self.stopping.wait(WATCH_SECONDS):
            if server.alive(self.home):
                continue
            log.warning("embedded %s is not running; starting it again", name)
            began = time.monotonic()
            while not self.stopping.is_set():
                try:
                    server.start(self.home)
                    log.warning("embedded %s serves again after %.1fs", name, time.monotonic() - began)
                    backoff.reset()
                    break
                except Exception as exc:  # noqa: BLE001 (whatever it was, try again later)
                    delay = backoff.after_exit(0)
                    log.warning("embedded %s did not start (%s); next try in %.1fs", name, exc, delay)
                    self.stopping.wait(delay)

    def _stop_all(self) -> bool:
        """Stop the children, then the embedded servers. True when every child exited 0."""
        for child in self.children.values():
            if child.proc is not None and child.proc.poll() is None:
                child.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 30
        for child in self.children.values():
            if child.proc is None:
                continue
            try:
                child.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("%s did not stop in time; its threads, then killing it:", child.name)
                child.proc.send_signal(stopping.STACKS_SIGNAL)
                time.sleep(STACKS_SECONDS)
                child.proc.kill()
                child.proc.wait()
            if child.proc.returncode != 0:
                log.warning("%s exited with %s while stopping", child.name, child.proc.returncode)
            (self.run_dir / f"{child.name}.pid").unlink(missing_ok=True)
        # `loom up` owns the embedded servers, also those it found running (left by a `loom up`
        # that was killed) and those it started again.
        for server in reversed(self.servers):
            try:
                server.stop(self.home)
            except Exception as exc:  # noqa: BLE001 (the rest must still stop)
                log.error("embedded %s did not stop: %s", _name(server), exc)
        return all(child.proc is None or child.proc.returncode == 0 for child in self.children.values())


def _name(server: ModuleType) -> str:
    return {"services.postgres": "PostgreSQL", "services.redis": "Redis"}.get(
        server.__name__, server.__name__
    )
