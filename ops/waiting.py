"""Ops that answer once stage runs are done (``wait: true``, a brief save, a saved message), waited
for without holding a request thread.

Such an op returns a ``Waiting``: a short ``check`` (a read on a thread) that either answers or
names the runs it still waits on. Over HTTP and MCP, ``wait`` awaits it on the event loop: each
check borrows a thread for the read only, and between checks the wait sleeps until PostgreSQL
notifies that a watched run is done (a trigger on ``stage_runs`` sends ``loom_run_done`` with the
run's id; migration 0029), or ``RECHECK_SECONDS`` have passed (a missed notification, a listener
that lost its connection). The CLI and in-process callers ``block`` on it instead."""

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import anyio
import psycopg

from models import db
from models.stage_run import DONE, FAILED, StageRun
from models.stages import Stage
from ops.schemas import Answer
from workers import ledger, outbox

log = logging.getLogger(__name__)

CHANNEL = "loom_run_done"
POLL_SECONDS = 0.1  # between checks while nothing can notify (blocking callers, a listener down)
RECHECK_SECONDS = 1.0  # between checks while notifications arrive: the safety net


@dataclass(frozen=True)
class Watch:
    """Not done yet: the runs whose end may change the answer."""

    run_ids: frozenset[int] = field(default_factory=frozenset)


T = TypeVar("T", covariant=True)  # what ``check`` answers: an op's answer (the CLI's own waits: any)


@dataclass(frozen=True)
class Waiting(Generic[T]):
    """An op's answer that ``check`` gives once ready, or after ``seconds`` (``check(True)``
    then answers as things stand)."""

    check: Callable[[bool], T | Watch]
    seconds: float


def block(waiting: Waiting[T]) -> T:
    """The answer, polling on this thread (the CLI, in-process callers)."""
    deadline = time.monotonic() + waiting.seconds
    while True:
        final = time.monotonic() >= deadline
        answer = waiting.check(final)
        if not isinstance(answer, Watch):
            return answer
        time.sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))


async def wait(waiting: Waiting[T]) -> T:
    """The answer, awaited on the event loop: no thread is held between checks."""
    deadline = time.monotonic() + waiting.seconds
    listener = _Listener.running.get(asyncio.get_running_loop())
    while True:
        final = time.monotonic() >= deadline
        answer = await anyio.to_thread.run_sync(waiting.check, final)
        if not isinstance(answer, Watch):
            return answer
        left = max(0.0, deadline - time.monotonic())
        if listener is not None and listener.up:
            await listener.done(answer.run_ids, min(left, RECHECK_SECONDS))
        else:
            await asyncio.sleep(min(left, POLL_SECONDS))


@contextlib.asynccontextmanager
async def listening() -> AsyncIterator[None]:
    """While the block runs (the API's lifespan), waits on this event loop are woken by
    notifications; without it they poll."""
    loop = asyncio.get_running_loop()
    listener = _Listener.running[loop] = _Listener()
    try:
        yield
    finally:
        del _Listener.running[loop]
        listener.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listener.task


class _Listener:
    """One LISTEN connection per event loop, waking the waits whose runs are done."""

    running: dict[asyncio.AbstractEventLoop, "_Listener"] = {}

    def __init__(self) -> None:
        self.up = False
        self.waiters: dict[int, set[asyncio.Event]] = {}
        self.task = asyncio.get_running_loop().create_task(self._listen(), name="loom-run-done-listener")

    async def done(self, run_ids: frozenset[int], timeout: float) -> None:
        """Return once one of the runs is done (as notified) or after ``timeout``."""
        event = asyncio.Event()
        for run_id in run_ids:
            self.waiters.setdefault(run_id, set()).add(event)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout)
        finally:
            for run_id in run_ids:
                if waiting := self.waiters.get(run_id):
                    waiting.discard(event)
                    if not waiting:
                        del self.waiters[run_id]

    async def _listen(self) -> None:
        pause = POLL_SECONDS
        while True:
            try:
                async with db.notifications(CHANNEL) as notes:
                    self.up, pause = True, POLL_SECONDS
                    async for payload in notes:
                        for event in self.waiters.get(int(payload), ()):
                            event.set()
            except (psycopg.Error, OSError) as exc:  # the database restarting: poll meanwhile
                if self.up:
                    log.warning("run notifications lost, polling until they are back: %s", exc)
            self.up = False
            await asyncio.sleep(pause)
            pause = min(pause * 2, 5.0)


A = TypeVar("A", bound=Answer)


def started(
    stage: Stage, run: StageRun, wait: bool, seconds: float, answer: Callable[[StageRun], A]
) -> A | Waiting[A]:
    """After the commit that wrote (or found) ``run``: wake its stage while it waits to be done,
    and answer (``answer`` of the run) at once or, with ``wait``, once it is done or after
    ``seconds``."""
    if run.status in DONE + (FAILED,):
        return answer(run)
    run_id = run.id
    assert run_id is not None  # a run the ledger wrote or found
    outbox.wake(stage, [run_id])
    if not wait:
        return answer(run)

    def check(final: bool) -> A | Watch:
        now = ledger.get(run_id)
        assert now is not None  # the ledger wrote or found it, and never deletes a run
        return answer(now) if final or now.status in DONE + (FAILED,) else Watch(frozenset({run_id}))

    return Waiting(check, seconds)
