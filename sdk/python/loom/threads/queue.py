"""``PendingSyncQueue``: the threads waiting to be sent to the server, in a SQLite file beside
them, so the queue survives the process and the machine restarting.

One entry a thread, in the order it was first queued: an upsert sends the thread as it is
stored then, so a thread saved five times while the server is away is sent once. Each enqueue
bumps the entry's generation; ``done`` removes the entry only when the generation it sent is
still the newest, so a save made while a sync was under way is sent again after it."""

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS pending_sync (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL UNIQUE,
    generation INTEGER NOT NULL DEFAULT 1,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL NOT NULL DEFAULT 0,
    last_error TEXT
)
"""


@dataclass(frozen=True)
class Pending:
    thread_id: str
    generation: int
    attempts: int
    last_error: str | None
    next_attempt_at: float = 0.0


class PendingSyncQueue:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        db.execute("PRAGMA synchronous=FULL")  # a queued id survives a power cut
        return db

    def enqueue(self, thread_id: str) -> None:
        with self._connect() as db:
            db.execute(
                "INSERT INTO pending_sync (thread_id) VALUES (?) ON CONFLICT (thread_id) DO UPDATE "
                "SET generation = generation + 1, next_attempt_at = 0",
                (thread_id,),
            )

    def all(self) -> list[Pending]:
        """Every entry, in the order they were queued."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT thread_id, generation, attempts, last_error, next_attempt_at "
                "FROM pending_sync ORDER BY seq"
            ).fetchall()
        return [Pending(*row) for row in rows]

    def due(self, now: float | None = None) -> list[Pending]:
        """The entries to send now: those in order up to the first still waiting out its backoff
        (the ones after it wait with it, so the order holds)."""
        moment = time.time() if now is None else now
        ready = []
        for entry in self.all():
            if entry.next_attempt_at > moment:
                break
            ready.append(entry)
        return ready

    def done(self, entry: Pending) -> None:
        with self._connect() as db:
            db.execute(
                "DELETE FROM pending_sync WHERE thread_id = ? AND generation = ?",
                (entry.thread_id, entry.generation),
            )

    def failed(self, entry: Pending, error: str, wait: float) -> None:
        """Try again after ``wait`` seconds (the entry keeps its place in the order)."""
        with self._connect() as db:
            db.execute(
                "UPDATE pending_sync SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? "
                "WHERE thread_id = ?",
                (error[:2_000], time.time() + wait, entry.thread_id),
            )

    def drop(self, thread_id: str) -> None:
        with self._connect() as db:
            db.execute("DELETE FROM pending_sync WHERE thread_id = ?", (thread_id,))
