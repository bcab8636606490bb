"""The shape the stages that ask a model share (titling, compaction, extraction, night weaving,
brief windows): the model is asked with the run's lease renewed and no transaction open; with no
provider the run is skipped for want of one, unless the stage answers in the model's place (its
deterministic builder); a failed call backs off, and is failed once out of attempts; and the run's
writes commit with its close or not at all, since a run whose lease ran out while it worked is
another worker's now."""

import logging
from collections.abc import Callable
from typing import TypeVar

from sqlmodel import Session

from models.stage_run import SKIPPED, SUCCEEDED, StageRun
from models.stages import Stage
from providers import llm
from workers import ledger
from workers.bodies import close, retry_later

log = logging.getLogger(__name__)

T = TypeVar("T")


def asked(
    stage: Stage,
    run: StageRun,
    ask: Callable[[], T],
    failed: str,
    without_model: Callable[[], T | None] | None = None,
    on_failure: Callable[[str], None] | None = None,
) -> T | None:
    """What ``ask`` (the model's call) answers, or None when the run is dealt with instead. With no
    provider: ``without_model`` answers in the model's place, or deals with the run itself (and
    answers None); by default the run is skipped (``no-llm-provider``). A failed call, as
    ``<failed>: <error>``: ``on_failure`` deals with it, by default the run backs off."""
    try:
        with ledger.leased([run]):
            return ask()
    except llm.NoProvider:
        if without_model is not None:
            return without_model()
        close(run, SKIPPED, reason=llm.NO_PROVIDER_REASON)
    except llm.LLMFailed as exc:
        error = f"{failed}: {exc}"
        if on_failure is not None:
            on_failure(error)
        else:
            retry_later(stage, run, error)
    return None


def committed(s: Session, run: StageRun, status: str = SUCCEEDED, **outcome) -> bool:
    """The run closed (``outcome``: reason, result) in the transaction of its writes; False, and
    those writes rolled back, when another worker holds the run now: it does them."""
    if ledger.finish(s, [run], status, **outcome):
        return True
    s.rollback()
    log.warning("%s run %d was taken over by another worker; its writes rolled back", run.stage, run.id)
    return False
