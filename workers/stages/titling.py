"""The titling stage: a run titles one thread from its first eight user and assistant turns
(``pipelines.titling``), never sending one that reads as high. When all eight read as high, or the
title the model writes does, the thread stays untitled and is marked ``title_refused`` in its
metadata so it is not asked again; with fewer such turns it waits, unmarked, for a plain one. A
title a person set meanwhile is never overwritten. The titler pass (``schedules/titling.py``)
requests the runs."""

from models import db
from models.conversation import Thread
from models.stage_run import SKIPPED, StageRun
from models.stages import TITLING
from pipelines import screening, titling
from providers import llm
from workers.asking import asked, committed
from workers.bodies import close, one_at_a_time
from workers.stages import register


def title_threads(run_ids: list[int]) -> None:
    one_at_a_time(TITLING, run_ids, _work)


register(TITLING, title_threads)


def _work(run: StageRun) -> None:
    thread_row_id = TITLING.subject_id(run.subject)
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
    answer = asked(
        TITLING, run, lambda: llm.get_llm().ask(titling.Title, titling.INSTRUCTIONS, prompt), "titler failed"
    )
    if answer is None:
        return None
    title = titling.cleaned(answer)
    if not title:
        return close(run, SKIPPED, reason="empty-title")
    if screening.is_high(title):
        return _refuse(run, thread_row_id, titling.TITLE_HIGH)
    with db.session() as s:
        titling.set_title(s, thread_row_id, title)
        committed(s, run, result={"title": title})
    return None


def _refuse(run: StageRun, thread_row_id: int, reason: str) -> None:
    """Untitled for good: the mark keeps the pass from asking again."""
    with db.session() as s:
        titling.mark_refused(s, thread_row_id)
        committed(s, run, SKIPPED, reason=reason)
