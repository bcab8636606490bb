"""CPU accounting for the benchmarks: which process of a running Loom used how many CPU
seconds, how busy the whole machine was, and waiting until nothing else uses the cores (another
test run on the same two cores would skew a throughput figure). Read from /proc; Linux only."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from harness import Loom, log

_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int, with_children: bool = False) -> float:
    """CPU seconds (user + system) a process has used; with its reaped children's when asked."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return (utime + stime + ((cutime + cstime) if with_children else 0)) / _TICKS


def _children(pid: int) -> list[int]:
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [int(x) for x in found]


def _pid_file(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def machine_busy_s() -> float:
    """CPU seconds the whole machine has spent busy (every core, every process) since boot."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / _TICKS


def wait_for_quiet(
    max_wait: float = 900.0,
    threshold: float = 0.25,
    window: float = 3.0,
    own: Callable[[], float] | None = None,
) -> float:
    """Wait until the rest of the machine (everything but this process and ``own()``) uses less
    than ``threshold`` cores for a whole ``window``: another test run on the same two cores would
    skew a throughput number. Gives up after ``max_wait`` and says so. Returns seconds waited."""
    started = time.perf_counter()
    warned = False
    while True:
        mine0, busy0 = _cpu(os.getpid()) + (own() if own else 0.0), machine_busy_s()
        time.sleep(window)
        mine1, busy1 = _cpu(os.getpid()) + (own() if own else 0.0), machine_busy_s()
        other = max(0.0, (busy1 - busy0) - (mine1 - mine0)) / window
        waited = time.perf_counter() - started
        if other < threshold:
            if warned:
                log(f"machine quiet again after {waited:.0f}s")
            return waited
        if waited > max_wait:
            log(f"WARNING: other processes still use {other:.2f} cores after {waited:.0f}s; measuring anyway")
            return waited
        if not warned:
            log(f"other processes use {other:.2f} cores; waiting for the machine to be quiet")
            warned = True


class CpuMeter:
    """CPU seconds used by each part of a running Loom (and this benchmark) between ``start`` and
    ``stop``. PostgreSQL counts the postmaster, its live backends and the ones that already exited."""

    def __init__(self, loom: Loom) -> None:
        self.loom = loom
        self._machine_before = 0.0
        self._before: dict[str, float] = {}
        self._began = 0.0
        self.result: dict | None = None

    def _sample(self) -> dict[str, float]:
        assert self.loom.home is not None and self.loom.proc is not None
        run = self.loom.home / "run"
        sample = {"bench": _cpu(os.getpid()), "supervisor": _cpu(self.loom.proc.pid)}
        for name in ("api", "worker", "scheduler"):
            pid = _pid_file(run / f"{name}.pid")
            sample[name] = _cpu(pid) if pid else 0.0
        postmaster = _pid_file(self.loom.home / "postgres" / "postmaster.pid")
        if postmaster:
            sample["postgres"] = _cpu(postmaster, with_children=True) + sum(
                _cpu(child) for child in _children(postmaster)
            )
        redis_pid = _pid_file(self.loom.home / "redis" / "redis.pid")
        if redis_pid:
            sample["redis"] = _cpu(redis_pid)
        return sample

    def loom_cpu_s(self) -> float:
        """CPU seconds used so far by Loom's processes (not this benchmark's)."""
        return sum(v for k, v in self._sample().items() if k != "bench")

    def start(self) -> None:
        self._began = time.perf_counter()
        self._before = self._sample()
        self._machine_before = machine_busy_s()

    def stop(self) -> dict:
        seconds = time.perf_counter() - self._began
        after = self._sample()
        machine = machine_busy_s() - self._machine_before
        used = {k: round(after.get(k, 0.0) - self._before.get(k, 0.0), 1) for k in after}
        self.result = {
            "window_s": round(seconds, 2),
            "cores": os.cpu_count(),
            "cpu_s": used,
            "cpu_s_total": round(sum(used.values()), 1),
            # Busy time of processes that are neither Loom nor this benchmark (should be ~0).
            "other_processes_cpu_s": round(max(0.0, machine - sum(used.values())), 1),
            # Core-seconds nobody used: the cores Loom left idle in the window.
            "idle_core_s": round(max(0.0, seconds * (os.cpu_count() or 1) - machine), 1),
            "utilisation": round(sum(used.values()) / (seconds * (os.cpu_count() or 1)), 3)
            if seconds
            else None,
        }
        return self.result


def process_cpu_s() -> float:
    """CPU seconds this process has used (all its threads)."""
    return _cpu(os.getpid())
