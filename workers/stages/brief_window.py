"""The brief_window stage: one run condenses one window of a save's events into the brief, by
the model (instructor) or by the deterministic builder, as the save chose. A save's windows revise
the brief in order: the run of the next window is requested when this one is done (revised,
failed for good, or not revised), in the same transaction, so two never run at once.

A window whose model call fails is retried with the ledger's backoff; once out of attempts it is
failed (an operator's ``loom runs retry`` can still revise it later) and the next window goes on.
The operator's switch (``LOOM_SESSION_BRIEF_MODEL_CALLS=off``) leaves this window and the rest of
the save not revised; the windows revised before stay."""

from sqlmodel import Session, col, select

from models import db
from models.base import stored, utcnow
from models.brief import FAILED, LLM, NOT_REVISED, PENDING, REVISED, BriefSave, BriefWindow, SessionBrief
from models.settings import get_settings
from models.stage_run import SKIPPED, StageRun
from models.stages import BRIEF_WINDOW
from pipelines import brief_store, brief_window, screening
from providers import llm
from workers import broker, ledger, outbox
from workers.asking import asked, committed
from workers.bodies import close, one_at_a_time
from workers.stages import register


def revise(run_ids: list[int]) -> None:
    one_at_a_time(BRIEF_WINDOW, run_ids, _work)


register(BRIEF_WINDOW, revise)


def request(s: Session, window_id: int) -> StageRun:
    return ledger.request(s, BRIEF_WINDOW, window_id, "1", {})


def _work(run: StageRun) -> None:
    with db.session() as s:
        window = s.get(BriefWindow, BRIEF_WINDOW.subject_id(run.subject))
        if window is None:
            return close(run, SKIPPED, reason="deleted")
        if window.status not in (PENDING, FAILED):  # done by an earlier delivery
            return close(run, SKIPPED, reason=window.status)
        save = s.get(BriefSave, window.save_id)
        assert save is not None  # a window's save (its foreign key)
        brief = s.get(SessionBrief, save.brief_id)
        assert brief is not None  # a save's brief (its foreign key)
        current = dict(brief.sections)
        s.expunge_all()
    window_id = stored(window.id)
    if not get_settings().session_brief_model_calls:
        return _not_revised(run, window_id, "model-calls-off")
    if save.author != LLM:
        return _apply(run, window_id, brief_window.build(current, window.events))
    budget = get_settings().llm_prompt_max_chars - len(brief_window.INSTRUCTIONS)
    prompt = brief_window.prompt(current, window.events, budget)
    if screening.is_high(prompt):  # each event passed; together they read as high
        return _not_revised(run, window_id, "prompt-high-sensitivity")
    answer = asked(
        BRIEF_WINDOW,
        run,
        lambda: llm.get_brief_llm().ask(brief_window.Revision, brief_window.INSTRUCTIONS, prompt),
        "brief window failed",
        # The model was configured when the save was made, and is not now.
        without_model=lambda: _not_revised(run, window_id, llm.NO_PROVIDER_REASON),
        on_failure=lambda error: _failed_attempt(run, window_id, error),
    )
    if answer is None:
        return None
    return _apply(run, window_id, brief_window.update_from(answer))


def _locked_window(s: Session, window_id: int) -> tuple[BriefWindow, BriefSave]:
    window = s.exec(select(BriefWindow).where(col(BriefWindow.id) == window_id).with_for_update()).one()
    save = s.get(BriefSave, window.save_id)
    assert save is not None  # a window's save (its foreign key)
    return window, save


def _next(s: Session, save: BriefSave, window: BriefWindow, now) -> list[int]:
    """After a window is done: the next window's run requested (its id to send once committed),
    or the save settled when it was the last."""
    following = s.exec(
        select(BriefWindow).where(
            col(BriefWindow.save_id) == save.id, col(BriefWindow.position) == window.position + 1
        )
    ).first()
    brief_store.settle(s, save, now)
    if following is None or following.status != PENDING:
        return []
    run = request(s, stored(following.id))
    return [stored(run.id)] if run.status == PENDING else []


def _send(run_ids: list[int]) -> None:
    if run_ids:
        outbox.send(BRIEF_WINDOW, run_ids)


def _apply(run: StageRun, window_id: int, update: dict) -> None:
    """The window's revision, the window done, the run closed and the next one requested: one
    transaction, so a run killed anywhere revised the brief once or not at all."""
    now = utcnow()
    with db.session() as s:
        window, save = _locked_window(s, window_id)
        if window.status not in (PENDING, FAILED):
            ledger.finish(s, [run], SKIPPED, reason=window.status)
            return
        brief = brief_store.locked(s, save.brief_id)
        refused = brief_store.revise(s, brief, update, save.author, save.session_id, stored(save.id), now)
        window.status, window.revision, window.error = REVISED, brief.revision, None
        s.add(window)
        result = {"revision": brief.revision, "refused_sections": refused}
        if not committed(s, run, result=result):
            return
        following = _next(s, save, window, now)
    _send(following)


def _not_revised(run: StageRun, window_id: int, reason: str) -> None:
    """This window and the save's later ones left as they are (those before stay revised)."""
    now = utcnow()
    with db.session() as s:
        window, save = _locked_window(s, window_id)
        for later in brief_store.windows(s, stored(save.id)):
            if later.position >= window.position and later.status in (PENDING, FAILED):
                later.status, later.error = NOT_REVISED, reason
                s.add(later)
        if not committed(s, run, SKIPPED, reason=reason):
            return
        brief_store.settle(s, save, now)


def _failed_attempt(run: StageRun, window_id: int, error: str) -> None:
    """Back off and try again; out of attempts, the window failed and the next one goes on."""
    following: list[int] = []
    with db.session() as s:
        retrying = ledger.release(s, [run], error)
        if not any(run.id in ids for ids in retrying.values()):
            window, save = _locked_window(s, window_id)
            if window.status == PENDING:
                window.status, window.error = FAILED, error
                s.add(window)
                following = _next(s, save, window, utcnow())
    for wait, ids in retrying.items():
        broker.send(BRIEF_WINDOW, ids, delay=wait)
    _send(following)
