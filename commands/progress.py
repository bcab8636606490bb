"""The CLI's one wait on stage runs, with its progress on stderr (stdout stays the command's answer
for scripts): every --wait (``loom passes run``, ``screening rescreen``, ``night-weave``,
``ingest-transcript``) and every op that waits on runs (``loom op erasure.request`` with ``wait``,
a brief's save) blocks here.

Once a wait has lasted SHOWN_AFTER, a terminal shows a bar (runs done of all, failures so far,
the rate, the time left; turns, for an ingest); anything else (a log, a pipe) gets a plain line
every LINE_SECONDS, and one when the wait ends."""

import time
from collections.abc import Callable
from types import TracebackType
from typing import TypeVar

from rich.progress import BarColumn, Progress, SpinnerColumn, TaskID, TextColumn

from commands.console import err, say
from models.stage_run import FAILED, PENDING, RUNNING, StageRun
from ops import waiting
from ops.waiting import Waiting, Watch
from workers import ledger

SHOWN_AFTER = 1.0  # seconds: a shorter wait shows nothing
BAR_SECONDS = 0.5  # between two reads of the runs while a bar shows
LINE_SECONDS = 10.0  # between two plain lines

T = TypeVar("T")


def block(check: Callable[[bool], T | Watch], seconds: float, what: str) -> T:
    """``check``'s answer, polled as ``ops.waiting.block`` polls (``check(True)`` once ``seconds``
    have passed), telling on stderr how the runs of its ``Watch``es are doing, as ``what``."""
    with _Report(what) as report:

        def reported(final: bool) -> T | Watch:
            answer = check(final)
            report.watch(answer.run_ids if isinstance(answer, Watch) else frozenset())
            return answer

        return waiting.block(Waiting(reported, seconds))


def _said(done: int, total: int, failed: int, seconds: float, unit: str = "runs") -> str:
    """E.g. ``12/40 runs done, 1 failed, 0.8/s, ~35 s left``; once none or all are done, the time
    waited instead of the rate. Counted in turns, the failures are of runs and said so (when any)."""
    counts = f"{done:,}/{total:,} {unit} done"
    if unit == "runs":
        counts += f", {failed} failed"
    elif failed:
        counts += f", {failed} run{'s' if failed > 1 else ''} failed"
    if 0 < done < total:
        rate = done / seconds
        return f"{counts}, {rate:.1f}/s, ~{(total - done) / rate:.0f} s left"
    return f"{counts}, {seconds:.0f} s"


def _measured(runs: list[StageRun], seconds: float) -> tuple[int, int, str]:
    """How far the runs got, and how it is said: in turns once every run says how many it has gone
    through of how many (an ingest's ``result``, written as it goes), else in runs. A run that is
    over counts whole in turns: one that failed midway keeps the progress of its last attempt."""
    failed = sum(run.status == FAILED for run in runs)
    results = [run.result or {} for run in runs]
    if runs and all({"turns", "done"} <= result.keys() for result in results):
        total = sum(r["turns"] for r in results)
        done = sum(r["done"] if _going(run) else r["turns"] for run, r in zip(runs, results, strict=True))
        return done, total, _said(done, total, failed, seconds, "turns")
    done = sum(not _going(run) for run in runs)
    return done, len(runs), _said(done, len(runs), failed, seconds)


def _going(run: StageRun) -> bool:
    return run.status in (PENDING, RUNNING)


class _Report:
    """The progress of one wait: the runs watched so far, read again when a report is due."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.started = time.monotonic()
        self.due = self.started + SHOWN_AFTER
        self.run_ids: set[int] = set()
        self.on_terminal = err.is_interactive
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        self.shown = False

    def __enter__(self) -> "_Report":
        return self

    def watch(self, run_ids: frozenset[int]) -> None:
        self.run_ids |= run_ids
        now = time.monotonic()
        if self.run_ids and now >= self.due:
            self._show(now)
            self.due = now + (BAR_SECONDS if self.on_terminal else LINE_SECONDS)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if self.shown and kind is None:  # how the wait ended
                self._show(time.monotonic())
        finally:
            if self.bar is not None:
                self.bar.stop()

    def _show(self, now: float) -> None:
        done, total, line = _measured(ledger.runs_by_id(sorted(self.run_ids)), now - self.started)
        self.shown = True
        if not self.on_terminal:
            say(f"{self.what}: {line}", to=err)
            return
        if self.bar is None:
            self.bar = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                TextColumn("{task.fields[said]}", markup=False),
                console=err,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.what, total=total, said=line)
        assert self.task is not None  # added with the bar, above
        self.bar.update(self.task, completed=done, total=total, said=line)
