"""The last hour of this process's appends and searches, minute by minute, for the dashboard's
charts: counted where ``/metrics``' counters are (``ops.append_metrics``, ``ops.search``), so a
chart and a scrape tell the same story. Per process, as those counters are: with several API
processes, each draws its own."""

import threading
import time
from collections import deque

from prometheus_client import Counter

MINUTES = 60


class PerMinute:
    """Counts by minute, the last ``MINUTES`` kept."""

    def __init__(self) -> None:
        self._counts: deque[list[int]] = deque(maxlen=MINUTES)  # [minute, count], oldest first
        self._lock = threading.Lock()

    def add(self, n: int = 1, now: float | None = None) -> None:
        minute = int((time.time() if now is None else now) // 60)
        with self._lock:
            if self._counts and self._counts[-1][0] == minute:
                self._counts[-1][1] += n
            else:
                self._counts.append([minute, n])

    def series(self, now: float | None = None) -> list[int]:
        """The last ``MINUTES`` minutes' counts, oldest first, the current minute last."""
        minute = int((time.time() if now is None else now) // 60)
        with self._lock:
            counted = {m: n for m, n in self._counts}
        return [counted.get(m, 0) for m in range(minute - MINUTES + 1, minute + 1)]


APPENDED = PerMinute()  # turns stored by conversation.append
SEARCHED = PerMinute()  # conversation.search calls answered

SEARCHES = Counter("loom_searches", "conversation.search calls answered", registry=None)


def searched() -> None:
    SEARCHES.inc()
    SEARCHED.add()
