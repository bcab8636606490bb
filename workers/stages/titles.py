"""The thread-title stage: a run titles one thread from its first eight user and assistant turns
(``pipelines.titling``), never sending one that reads as high. When all eight read as high, or the
title the model writes does, the thread stays untitled and is marked ``title_refused`` in its
metadata so it is not asked again; with fewer such turns it waits, unmarked, for a plain one. A
title a person set meanwhile is never overwritten. The titler pass (``schedules/titler.py``)
requests the runs."""

from models import db
from models.conversation import Thread
from models.stage_run import SKIPPED, SUCCEEDED, StageRun
from pipelines import screening, titling
from providers import llm
from workers import ledger
from workers.bodies import close, one_at_a_time, retry_later
from workers.stages import Stage, register

STAGE = "title"


def title_threads(run_ids: list[int]) -> None:
    one_at_a_time(TITLE, run_ids, _work)


TITLE = register(Stage(STAGE, title_threads, subject_kind="thread", chunk=1))


def _work(run: StageRun) -> None:
    thread_row_id = TITLE.subject_id(run.subject)
    with db.session() as s:
        thread = s.get(Thread, thread_row_id)
        first = titling.first_turns(s, thread) if thread else []
    if thread is None or thread.deleted_at is not None:
        return close(run, SKIPPED, reason="deleted")
    if thread.title:
        return close(run, SKIPPED, reason="titled")
    prompt = titling.prompt(first)
    if prompt is None:
        if len(first) >= titling.FIRST_TURNS:
            return _refuse(run, thread_row_id, titling.EVERY_TURN_HIGH)
        return close(run, SKIPPED, reason="waiting-for-plain-turn")
    try:
        with ledger.leased([run]):
            answer = llm.get_llm().ask(titling.Title, titling.INSTRUCTIONS, prompt)
    except llm.NoProvider:
        return close(run, SKIPPED, reason=llm.NO_PROVIDER_REASON)
    except llm.LLMFailed as exc:
        return retry_later(TITLE, run, f"titler failed: {exc}")
    title = titling.cleaned(answer)
    if not title:
        return close(run, SKIPPED, reason="empty-title")
    if screening.is_high(title):
        return _refuse(run, thread_row_id, titling.TITLE_HIGH)
    with db.session() as s:
        titling.set_title(s, thread_row_id, title)
        ledger.finish(s, [run], SUCCEEDED, result={"title": title})
    return None


def _refuse(run: StageRun, thread_row_id: int, reason: str) -> None:
    """Untitled for good: the mark keeps the pass from asking again."""
    with db.session() as s:
        titling.mark_refused(s, thread_row_id)
        ledger.finish(s, [run], SKIPPED, reason=reason)
