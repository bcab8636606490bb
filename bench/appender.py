"""Appending turns to a running Loom over HTTP from a few client threads, with latency figures."""

from __future__ import annotations

import http.client
import json
import queue
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from harness import percentile, rounded
from longmemeval import Turn


@dataclass
class AppendStats:
    """What the client threads saw. Times are ``time.perf_counter()`` values."""

    requested: int = 0
    sent: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    outcomes: Counter = field(default_factory=Counter)  # stored / duplicate / logging_disabled / ...
    embedding: Counter = field(default_factory=Counter)  # pending / not_embedded, as answered
    started: float = 0.0
    finished: float | None = None
    error: BaseException | None = None

    @property
    def done(self) -> bool:
        return self.finished is not None

    def summary(self) -> dict:
        seconds = (self.finished or time.perf_counter()) - self.started
        return {
            "appends": self.sent,
            "append_seconds": rounded(seconds),
            "appends_per_s": rounded(self.sent / seconds if seconds else None, 1),
            "append_p50_ms": rounded(percentile(self.latencies_ms, 50)),
            "append_p95_ms": rounded(percentile(self.latencies_ms, 95)),
            "append_p99_ms": rounded(percentile(self.latencies_ms, 99)),
            "append_outcomes": dict(self.outcomes),
        }


class Appender:
    """Append threads' turns from ``clients`` concurrent HTTP clients, in the background.

    Each client takes a whole thread (conversation) at a time and appends its turns in order, the
    way several agents each writing their own conversation would; ``stats`` fills in as it goes.
    """

    RETRIES = 3

    def __init__(
        self, base_url: str, token: str, namespace: str, threads: list[list[Turn]], clients: int = 6
    ) -> None:
        self.base_url = base_url
        self.token = token
        self.namespace = namespace
        self.clients = clients
        self.work: queue.Queue[list[Turn]] = queue.Queue()
        for turns in threads:
            self.work.put(turns)
        self.stats = AppendStats(requested=sum(len(t) for t in threads))
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()

    def start(self) -> AppendStats:
        self.stats.started = time.perf_counter()
        self._threads = [
            threading.Thread(target=self._client, name=f"append-{i}", daemon=True)
            for i in range(self.clients)
        ]
        for t in self._threads:
            t.start()
        threading.Thread(target=self._close, name="append-close", daemon=True).start()
        return self.stats

    def _close(self) -> None:
        for t in self._threads:
            t.join()
        self.stats.finished = time.perf_counter()

    def join(self) -> AppendStats:
        for t in self._threads:
            t.join()
        while not self.stats.done:
            time.sleep(0.01)
        if self.stats.error is not None:
            raise RuntimeError(f"appending failed: {self.stats.error}") from self.stats.error
        return self.stats

    def _client(self) -> None:
        # http.client rather than httpx: the load generator shares the cores with Loom, and 2,000
        # appends cost it 2.9 CPU-seconds with httpx, 1.0 with http.client.
        url = urlsplit(self.base_url)
        client = http.client.HTTPConnection(url.hostname, url.port, timeout=120.0)
        try:
            while not self._stop.is_set():
                try:
                    turns = self.work.get_nowait()
                except queue.Empty:
                    return
                for turn in turns:
                    try:
                        self._append(client, turn)
                    except BaseException as exc:
                        with self._lock:
                            self.stats.error = self.stats.error or exc
                        self._stop.set()
                        return
        finally:
            client.close()

    def _append(self, client: http.client.HTTPConnection, turn: Turn) -> None:
        body = json.dumps(
            {
                "namespace": self.namespace,
                "thread_id": turn.session_id,
                "role": turn.role,
                "content": turn.content,
                "msg_id": turn.msg_id,
                **({"ts": turn.said} if turn.said else {}),
                **({"name": turn.speaker} if turn.speaker else {}),
            }
        ).encode()
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        for attempt in range(1, self.RETRIES + 1):
            began = time.perf_counter()
            try:
                client.request("POST", "/v1/conversation.append", body=body, headers=headers)
                response = client.getresponse()
                payload = response.read()
            except (OSError, http.client.HTTPException):
                client.close()  # the next request opens a new connection
                if attempt == self.RETRIES:
                    raise
                time.sleep(0.5 * attempt)
                continue
            elapsed_ms = (time.perf_counter() - began) * 1000
            if response.status >= 500 and attempt < self.RETRIES:
                time.sleep(0.5 * attempt)
                continue
            if response.status != 200:
                raise RuntimeError(f"append {turn.msg_id}: HTTP {response.status} {payload[:300]!r}")
            answer = json.loads(payload)
            with self._lock:
                self.stats.sent += 1
                self.stats.latencies_ms.append(elapsed_ms)
                self.stats.outcomes["stored" if answer.get("stored") else answer.get("reason")] += 1
                if answer.get("stored"):
                    self.stats.embedding[answer.get("embedding")] += 1
            return
