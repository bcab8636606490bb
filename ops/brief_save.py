"""session.brief_save. A save of sections (the agent's own words) writes them over the brief at
once. A save of events is thin like every write: its events are screened (one that reads as high is
dropped), cut into windows and stored, and the first window's ``brief_window`` run is requested;
the worker condenses the windows in order, by the model or the deterministic builder. The op then
waits a bounded time for them (holding no request thread: ``ops.waiting``), so it can say what
happened (revised, partly, not revised, or 503 when every model call failed), and past that
answers with the runs to wait on. Briefs are addressed as ``ops.schemas.briefs`` says; the save's
course is ``pipelines.brief_saving``'s."""

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlmodel import Session

from models import db
from models.base import stored, utcnow
from models.brief import AGENT, FAILED, NOT_REVISED, PENDING, REVISED, BriefSave, SessionBrief
from models.stages import BRIEF_WINDOW
from ops.caller import Caller
from ops.errors import OpError, invalid
from ops.schemas import ActedIn, Answer
from ops.schemas.briefs import Author, BriefOp, checked_key, prefix_of, seen_key, stored_key
from ops.waiting import Waiting, Watch
from pipelines import brief_events, brief_saving
from workers import outbox
from workers.stages.brief_window import request as request_window


def _list(description: str, cap: int = 100) -> Any:  # a pydantic Field, typed as its default
    return Field(default=None, max_length=cap, description=description)


class SectionsIn(BaseModel):
    """The agent's own sections; each replaces the brief's, or adds to decisions, dead ends, done."""

    model_config = ConfigDict(extra="forbid")

    goal: str | None = Field(
        default=None, max_length=4_000, description="What the line of work is for (replaces the brief's)."
    )
    status: str | None = Field(
        default=None, max_length=4_000, description="Where it stands now (replaces the brief's)."
    )
    decisions: list[str] | None = _list(
        description="Decisions taken, added to the brief's (the 20 newest kept)."
    )
    dead_ends: list[str] | None = _list(
        description="Approaches tried that failed, added to the brief's (the 12 newest kept)."
    )
    done: list[str] | None = _list(
        description="What was finished, added to the brief's (the 16 newest kept)."
    )
    open_questions: list[str] | None = _list(
        description="Questions still open (replaces the brief's; at most 8)."
    )
    next_steps: list[str] | None = _list(description="What to do next (replaces the brief's; at most 8).")
    key_files: list[str] | None = _list(
        description="The files that matter (replaces the brief's; at most 20)."
    )
    errors: list[str] | None = _list(
        description="Errors met and not yet solved (replaces the brief's; at most 8)."
    )
    constraints: list[str] | None = _list(
        description="Rules the work must keep (replaces the brief's; at most 10)."
    )
    pointers: list[str] | None = _list(
        description="Commands, searches, links worth keeping (replaces the brief's; at most 12)."
    )


class Addressed(BriefOp):
    brief_key: str = Field(
        default="",
        max_length=600,
        description=(
            "The brief's key (^[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,159}$); empty: auto/<project>/<branch>, else "
            "session/<session_id>."
        ),
    )
    project: str | None = Field(
        default=None,
        min_length=1,
        max_length=128,
        description="The project the work is in (1-128 characters).",
    )
    branch: str | None = Field(
        default=None,
        min_length=1,
        max_length=128,
        description="The branch the work is on (1-128 characters).",
    )
    session_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description="The client's session that saves (1-256 characters).",
    )


class BriefSaveRequest(Addressed):
    model_config = ConfigDict(title="SaveRequest")

    events: list[brief_events.Event] = Field(
        default_factory=list,
        max_length=brief_events.MAX_EVENTS,
        description=(
            "What happened in the session (at most 4,000): condensed into the brief by the model or the "
            "deterministic builder."
        ),
    )
    sections: SectionsIn | None = Field(
        default=None, description="The agent's own sections, written over the brief at once (author model)."
    )
    event_cursor: str | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description=(
            "Where the events end in the client's stream: a save repeating the previous save's session_id "
            "and event_cursor writes nothing (reason repeated)."
        ),
    )
    if_revision: int | None = Field(
        default=None,
        ge=0,
        le=2**31 - 1,
        description="Compare-and-set: save only when the brief is at this revision; 409 otherwise.",
    )
    use_llm: bool = Field(
        default=True,
        description=(
            "false: no model is asked (events alone then revise nothing, unless deterministic_fallback)."
        ),
    )
    # With no model to call (none configured, or use_llm false), the deterministic builder condenses
    # the events instead of no one: the coding plugins' saves, which must leave a brief either way.
    deterministic_fallback: bool = Field(
        default=False,
        description=(
            "With no model to call, the deterministic builder condenses the events instead (the coding "
            "plugins' saves)."
        ),
    )
    wait_seconds: float = Field(
        default=30,
        ge=0,
        le=120,
        description=(
            "How long to wait for the events' windows to be revised (0-120 s, default 30); past it the "
            "answer says pending."
        ),
    )


class WindowCounts(Answer):
    total: int = Field(description="How many windows the events were cut into.")
    revised: int = Field(description="Windows that revised the brief.")
    failed: int = Field(description="Windows whose model call failed (runs.retry can revise them later).")
    not_revised: int = Field(
        description="Windows left unrevised (no model to call, or model calls switched off)."
    )
    pending: int = Field(description="Windows still waiting for the worker.")


class EventCounts(Answer):
    received: int = Field(description="Events the save carried.")
    screened_out: int = Field(description="Events that read as high: never stored, never sent to a model.")
    dropped: int = Field(description="Events dropped as older than the windows kept.")


Reason = Literal["not-revised", "repeated", "pending"]


class BriefSaveAnswer(Answer):
    model_config = ConfigDict(title="SaveAnswer")

    namespace: ActedIn
    brief_key: str = Field(description="The brief saved (its key as the caller sees it).")
    revision: int = Field(description="The brief's revision after the save.")
    changed: bool = Field(description="Whether the save wrote a new revision.")
    reason: Reason | None = Field(
        description=(
            "Why not changed: not-revised (no model to call), repeated (the same session_id and event_cursor "
            "again) or pending (windows still revising: wait on run_ids)."
        )
    )
    author: Author
    save_id: int | None = Field(description="The save's id (a save of sections alone has none).")
    windows: WindowCounts = Field(description="The events' windows counted by outcome.")
    run_ids: list[int] = Field(
        description="The windows' brief_window runs (those still to wait on, when pending)."
    )
    events: EventCounts = Field(description="The events counted: received, screened out, dropped.")
    refused_sections: list[str] = Field(description="Sections not stored because they read as high.")


def _save_key(req: BriefSaveRequest) -> str:
    if req.brief_key:
        return req.brief_key
    if req.project and req.branch:
        return checked_key(
            f"auto/{req.project}/{req.branch}", "project and branch, as auto/<project>/<branch>"
        )
    if req.session_id:
        return checked_key(f"session/{req.session_id}", "session_id, as session/<session_id>")
    raise invalid("a save needs brief_key, or project and branch, or session_id", "brief_key")


# --- save ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Outcome:
    """Where a save stands: the brief's revision, and the save's windows and their runs."""

    revision: int
    author: str | None
    save_id: int | None
    windows: WindowCounts
    run_ids: list[int]


@dataclass(frozen=True)
class _Given:
    """What a save's answer says of the save itself, however its windows come out."""

    namespace: str
    brief_key: str  # as the caller names it
    received: int
    screened_out: int = 0
    dropped: int = 0
    refused_sections: list[str] = field(default_factory=list)

    def answer(self, outcome: _Outcome, changed: bool, reason: Reason | None) -> BriefSaveAnswer:
        return BriefSaveAnswer(
            namespace=self.namespace,
            brief_key=self.brief_key,
            revision=outcome.revision,
            changed=changed,
            reason=reason,
            author=outcome.author,
            save_id=outcome.save_id,
            windows=outcome.windows,
            run_ids=outcome.run_ids,
            events=EventCounts(received=self.received, screened_out=self.screened_out, dropped=self.dropped),
            refused_sections=self.refused_sections,
        )


def save(caller: Caller, req: BriefSaveRequest) -> BriefSaveAnswer | Waiting[BriefSaveAnswer]:
    """Save a session brief: the resumable state of a line of work.

    With `sections`, the agent's own are written over the brief at once (`author: "model"`). With
    `events` (what happened in the session), the events are screened, cut into windows and condensed
    by the worker, by the LLM or the deterministic builder; the op waits up to `wait_seconds` and
    answers what happened, or `reason: "pending"` with the runs to wait on. A save repeating the
    previous save's `session_id` and `event_cursor` writes nothing (`repeated`).

    Errors: 422 without brief_key, project and branch, or session_id, or without events and sections;
    409 when `if_revision` does not match; 503 when every window's model call failed (send it again)."""
    namespace = caller.namespace(req.namespace)
    prefix = prefix_of(caller, req)
    key = stored_key(caller, req, _save_key(req))
    if not req.events and req.sections is None:
        raise invalid("a save carries events, sections, or both", "events")
    sections = req.sections.model_dump(exclude_none=True) if req.sections is not None else None
    author = (
        AGENT if sections is not None else brief_saving.events_author(req.use_llm, req.deterministic_fallback)
    )
    given = _Given(namespace, seen_key(prefix, key), received=len(req.events))
    address = brief_saving.Address(namespace, key, req.project, req.branch, caller.who[:64])
    now = utcnow()
    with db.session() as s:
        brief = brief_saving.locked(s, address, now)
        last = brief_saving.last_save(s, brief)
        if brief_saving.repeats(last, req.session_id, req.event_cursor):
            assert last is not None  # a save repeated
            return given.answer(_outcome(s, brief, last), changed=False, reason="repeated")
        if req.if_revision is not None and (
            brief.revision != req.if_revision or (last is not None and last.status == PENDING)
        ):
            held = " (another save's windows are being revised)" if brief.revision == req.if_revision else ""
            raise OpError(409, f"the brief is at revision {brief.revision}{held}, not {req.if_revision}")
        if author is None:
            return given.answer(_nothing(brief_saving.unsaved(s, brief)), changed=False, reason=NOT_REVISED)
        if sections is not None:
            record, refused = brief_saving.save_sections(
                s, brief, sections, req.session_id, req.event_cursor, now
            )
            given = replace(given, refused_sections=refused)
            return given.answer(_outcome(s, brief, record), changed=True, reason=None)
        cut = brief_saving.save_events(s, brief, req.events, req.session_id, req.event_cursor, author, now)
        given = replace(given, screened_out=cut.screened_out, dropped=cut.dropped)
        if cut.save_id is None or cut.first_window is None:
            return given.answer(_nothing(cut.revision), changed=False, reason=NOT_REVISED)
        first = request_window(s, cut.first_window)

    outbox.wake(BRIEF_WINDOW, [stored(first.id)])
    return _waited(given, cut.save_id, req.wait_seconds)


def _nothing(revision: int) -> _Outcome:
    """A save that wrote nothing: the brief as it was."""
    none = WindowCounts(total=0, revised=0, failed=0, not_revised=0, pending=0)
    return _Outcome(revision=revision, author=None, save_id=None, windows=none, run_ids=[])


def _outcome(s: Session, brief: SessionBrief, record: BriefSave) -> _Outcome:
    progress = brief_saving.progress(s, brief, record)
    counts = progress.counts
    return _Outcome(
        revision=progress.revision,
        author=progress.author,
        save_id=progress.save_id,
        windows=WindowCounts(
            total=progress.windows,
            revised=counts[REVISED],
            failed=counts[FAILED],
            not_revised=counts[NOT_REVISED],
            pending=counts[PENDING],
        ),
        run_ids=progress.run_ids,
    )


def _waited(given: _Given, save_id: int, seconds: float) -> Waiting[BriefSaveAnswer]:
    """The save's outcome once its windows are done, or as it stands after ``seconds``."""

    def check(final: bool) -> BriefSaveAnswer | Watch:
        with db.session() as s:
            record, brief = brief_saving.of_save(s, save_id)
            outcome = _outcome(s, brief, record)
        if record.status == PENDING and not final:
            return Watch(frozenset(outcome.run_ids))
        if record.status == FAILED:
            raise OpError(503, "no window of the save could be revised (the model failed); send it again")
        reasons: dict[str, Reason] = {PENDING: "pending", NOT_REVISED: NOT_REVISED}
        reason = reasons.get(record.status)
        return given.answer(outcome, changed=record.status == REVISED, reason=reason)

    return Waiting(check, seconds)
