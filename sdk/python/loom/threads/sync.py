"""Syncing threads with the server, offline first: ``ThreadSyncClient`` (the HTTP client of
``/api/threads``), ``merge`` (a 409's resolution) and ``SyncingThreadStore`` (save locally, queue,
sync in the background; ``save_and_sync`` for commands that exit at once).

A save writes the thread to the local store and queues its id in the persistent queue; a
background thread sends the queue in order (the next save of any thread, or ``sync()``, sends
what an outage left). A private thread is never queued nor sent. A 409 carries the server's
latest: ``merge`` keeps both sides' new messages in order (the server's first), and the upsert is
sent again against the server's version. A failure keeps the entry (and the ones after it, so the
order holds) for a retry with backoff."""

from __future__ import annotations

import builtins
import threading
from dataclasses import dataclass, field

import httpx

from loom.errors import ConnectionFailed, LoomError, from_answer
from loom.threads.local import LocalThreadStore, data_dir
from loom.threads.model import Thread, ThreadSummary, now
from loom.threads.queue import Pending, PendingSyncQueue

RETRY_MAX_WAIT = 300.0


class VersionConflict(LoomError):
    """409: the server holds a newer version; ``latest`` is it."""

    def __init__(self, latest: Thread) -> None:
        super().__init__(409, f"the server holds version {latest.version}")
        self.latest = latest


class ThreadSyncClient:
    def __init__(
        self, base_url: str, token: str | None = None, timeout: float = 30.0, namespace: str | None = None
    ):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.base_url = base_url.rstrip("/")
        self._params = {"namespace": namespace} if namespace else {}
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout)

    def _send(self, method: str, path: str, **kwargs) -> httpx.Response:
        try:
            params = {**self._params, **kwargs.pop("params", {})}
            return self._http.request(method, f"/api/threads{path}", params=params, **kwargs)
        except httpx.TransportError as exc:
            raise ConnectionFailed(0, f"cannot reach Loom at {self.base_url}: {exc}") from exc

    @staticmethod
    def _answer(response: httpx.Response) -> dict:
        body = (
            response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
        )
        if response.status_code == 409 and "thread" in body:
            raise VersionConflict(Thread.model_validate(body["thread"]))
        if response.status_code >= 400:
            raise from_answer(response.status_code, body or response.text)
        return body

    def upsert(self, thread: Thread) -> Thread:
        """The thread as the server stored it (with its new version)."""
        sent = self._send("PUT", f"/{thread.id}", content=thread.model_dump_json())
        return Thread.model_validate(self._answer(sent))

    def get(self, thread_id: str) -> Thread | None:
        response = self._send("GET", f"/{thread_id}")
        if response.status_code == 404:
            return None
        return Thread.model_validate(self._answer(response))

    def list(self, limit: int = 50, offset: int = 0) -> list[dict]:
        return self._answer(self._send("GET", "", params={"limit": limit, "offset": offset}))["threads"]

    def search(self, query: str, limit: int = 20) -> builtins.list[dict]:  # `list`: the method above
        return self._answer(self._send("GET", "/search", params={"q": query, "limit": limit}))["threads"]

    def close(self) -> None:
        self._http.close()


def merge(local: Thread, server: Thread) -> Thread:
    """Both sides' edits of one thread, to send again against the server's version.

    Messages are append-only: the server's, then the local side's messages past the prefix both
    share. ``git_commits`` and tags: the union in order. ``created_at``, and the git initial
    values, are the earliest (the server's when it has them); ``last_activity_at`` the latest.
    Every other field is the local side's: it is the one being edited now."""
    shared = 0
    for mine, theirs in zip(local.conversation.messages, server.conversation.messages, strict=False):
        if mine != theirs:
            break
        shared += 1
    merged = local.model_copy(deep=True)
    merged.version = server.version
    merged.conversation.messages = [*server.conversation.messages, *local.conversation.messages[shared:]]
    merged.git_commits = list(dict.fromkeys([*server.git_commits, *local.git_commits]))
    merged.metadata.tags = list(dict.fromkeys([*server.metadata.tags, *local.metadata.tags]))
    merged.created_at = min(local.created_at, server.created_at)
    merged.last_activity_at = max(local.last_activity_at, server.last_activity_at)
    merged.updated_at = now()
    if server.git_initial_branch is not None or server.git_initial_commit_sha is not None:
        merged.git_initial_branch = server.git_initial_branch
        merged.git_initial_commit_sha = server.git_initial_commit_sha
        merged.git_start_dirty = server.git_start_dirty
    return merged


@dataclass
class SyncReport:
    sent: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    waiting: int = 0  # entries left in the queue


def backoff(attempts: int) -> float:
    return min(2.0 * 2**attempts, RETRY_MAX_WAIT)


class SyncingThreadStore:
    def __init__(
        self,
        local: LocalThreadStore,
        sync_client: ThreadSyncClient | None = None,
        queue: PendingSyncQueue | None = None,
        background: bool = True,
    ) -> None:
        self.local = local
        self.sync_client = sync_client
        self.pending_sync = queue or PendingSyncQueue(local.root.parent / "sync-queue.sqlite3")
        self._background = background
        self._lock = threading.RLock()  # a local read-modify-write at a time
        self._syncing = threading.Lock()  # one pass over the queue at a time
        self._wake = threading.Event()
        self._worker: threading.Thread | None = None

    @classmethod
    def with_sync(
        cls, local: LocalThreadStore, sync_client: ThreadSyncClient, **kwargs
    ) -> SyncingThreadStore:
        return cls(local, sync_client, **kwargs)

    @classmethod
    def from_xdg(cls, sync_client: ThreadSyncClient | None = None, **kwargs) -> SyncingThreadStore:
        return cls(LocalThreadStore(data_dir() / "threads"), sync_client, **kwargs)

    # --- the store ---------------------------------------------------------------------------

    def load(self, thread_id: str) -> Thread | None:
        return self.local.load(thread_id)

    def list(self, limit: int = 50) -> list[ThreadSummary]:
        return self.local.list(limit)

    def search(self, query: str, limit: int = 20) -> builtins.list[ThreadSummary]:  # `list`: the method above
        return self.local.search(query, limit)

    def delete(self, thread_id: str) -> None:
        with self._lock:
            self.local.delete(thread_id)
            self.pending_sync.drop(thread_id)

    def save(self, thread: Thread) -> None:
        """Locally first; then queued, and the background sync woken (never for a private thread)."""
        with self._lock:
            self.local.save(thread)
            if thread.is_private or self.sync_client is None:
                return
            self.pending_sync.enqueue(thread.id)
        if self._background:
            self._start()
            self._wake.set()

    def save_and_sync(self, thread: Thread) -> SyncReport:
        """Save, then send the queue now (this thread and whatever waits before it); raises the
        error that kept this thread from the server."""
        self.save(thread)
        report = self.sync()
        if thread.id in report.failed:
            raise LoomError(0, f"{thread.id} is saved locally, not synced: {report.failed[thread.id]}")
        return report

    # --- syncing -----------------------------------------------------------------------------

    def sync(self, due_only: bool = False) -> SyncReport:
        """Send the queue in order; stop at the first failure (the rest keep their order)."""
        report = SyncReport()
        if self.sync_client is None:
            return report
        with self._syncing:
            entries = self.pending_sync.due() if due_only else self.pending_sync.all()
            for entry in entries:
                try:
                    self._send(entry, report)
                except LoomError as exc:
                    self.pending_sync.failed(entry, exc.reason, backoff(entry.attempts))
                    report.failed[entry.thread_id] = exc.reason
                    break
            report.waiting = len(self.pending_sync.all())
        return report

    def _send(self, entry: Pending, report: SyncReport) -> None:
        """One queued thread to the server. The network call holds no lock, so saves go on; the
        local file is read and rewritten under it, so a save made meanwhile is never lost (its
        newer generation keeps the entry queued)."""
        with self._lock:
            thread = self.local.load(entry.thread_id)
        if thread is None or thread.is_private:  # deleted, or made private, since it was queued
            self.pending_sync.done(entry)
            return
        try:
            stored = self.sync_client.upsert(thread)
        except VersionConflict as conflict:
            with self._lock:
                thread = merge(self.local.load(thread.id) or thread, conflict.latest)
                self.local.save(thread)
            stored = self.sync_client.upsert(thread)  # a second conflict fails this pass
            report.merged.append(thread.id)
        with self._lock:
            current = self.local.load(thread.id) or thread
            current.version = stored.version  # the server's count, kept with what is stored here
            self.local.save(current)
        self.pending_sync.done(entry)
        report.sent.append(thread.id)

    def _start(self) -> None:
        if self._worker is None or not self._worker.is_alive():
            self._worker = threading.Thread(target=self._run, name="loom-thread-sync", daemon=True)
            self._worker.start()

    def _run(self) -> None:
        while True:
            # A save wakes it to send the whole queue now; otherwise it looks at what is due.
            kicked = self._wake.wait(timeout=RETRY_MAX_WAIT / 10)
            self._wake.clear()
            try:
                self.sync(due_only=not kicked)
            except Exception:  # noqa: BLE001 - a background loop outlives any one failure
                continue

    def close(self) -> None:
        if self.sync_client is not None:
            self.sync_client.close()
