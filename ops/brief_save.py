"""session.brief_save. A save of sections (the agent's own words) writes them over the brief at
once. A save of events is thin like every write: its events are screened (one that reads as high is
dropped), cut into windows and stored, and the first window's ``brief_window`` run is requested;
the worker condenses the windows in order, by the model or the deterministic builder. The op then
waits a bounded time for them (holding no request thread: ``ops.waiting``), so it can say what
happened (revised, partly, not revised, or 503 when every model call failed), and past that
answers with the runs to wait on. Briefs are addressed as ``ops.briefs`` says."""

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select

from models import db
from models.base import stored, utcnow
from models.brief import (
    AGENT,
    DETERMINISTIC,
    FAILED,
    LLM,
    NOT_REVISED,
    PENDING,
    REVISED,
    BriefSave,
    BriefWindow,
    SessionBrief,
)
from models.settings import get_settings
from models.stage_run import StageRun
from models.stages import BRIEF_WINDOW
from ops.briefs import BriefOp, checked_key, prefix_of, seen_key, stored_key
from ops.caller import Caller
from ops.errors import OpError, invalid
from ops.schemas import ActedIn, Answer
from ops.waiting import Waiting, Watch
from pipelines import brief_events, brief_store
from providers import llm
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


class SaveRequest(Addressed):
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


class SaveAnswer(Answer):
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
    author: Literal["llm", "deterministic", "model"] | None = Field(
        description=(
            "Who wrote the revision: llm (the model, from events), deterministic (the builder, from events) "
            "or model (the calling agent's own sections)."
        )
    )
    save_id: int | None = Field(description="The save's id (a save of sections alone has none).")
    windows: WindowCounts = Field(description="The events' windows counted by outcome.")
    run_ids: list[int] = Field(
        description="The windows' brief_window runs (those still to wait on, when pending)."
    )
    events: EventCounts = Field(description="The events counted: received, screened out, dropped.")
    refused_sections: list[str] = Field(description="Sections not stored because they read as high.")


def _save_key(req: SaveRequest) -> str:
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


def _events_author(req: SaveRequest) -> str | None:
    """Who condenses a save of events alone: the model, the builder, or no one (not revised)."""
    settings = get_settings()
    if not settings.session_brief_model_calls:
        return None  # the operator's switch stops the model and the builder alike
    if not settings.session_brief_llm:
        return DETERMINISTIC
    if not req.use_llm or isinstance(llm.get_brief_llm(), llm.FakeLLM):
        return DETERMINISTIC if req.deterministic_fallback else None
    return LLM


def _brief_locked(
    s, namespace: str, key: str, req: SaveRequest, caller: Caller, now: datetime
) -> SessionBrief:
    s.exec(
        insert(SessionBrief)
        .values(
            namespace=namespace,
            brief_key=key,
            project=req.project,
            branch=req.branch,
            written_by=caller.who[:64],
            created_at=now,
            updated_at=now,
        )
        .on_conflict_do_nothing(index_elements=["namespace", "brief_key"])
    )
    return s.exec(
        select(SessionBrief)
        .where(col(SessionBrief.namespace) == namespace, col(SessionBrief.brief_key) == key)
        .with_for_update()
    ).one()


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

    def answer(self, outcome: _Outcome, changed: bool, reason: Reason | None) -> SaveAnswer:
        return SaveAnswer(
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


def save(caller: Caller, req: SaveRequest) -> SaveAnswer | Waiting:
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
    author = AGENT if sections is not None else _events_author(req)
    given = _Given(namespace, seen_key(prefix, key), received=len(req.events))
    now = utcnow()
    with db.session() as s:
        brief = _brief_locked(s, namespace, key, req, caller, now)
        last = s.get(BriefSave, brief.last_save_id) if brief.last_save_id else None
        if (
            last is not None
            and req.session_id is not None
            and req.event_cursor is not None
            and (last.session_id, last.event_cursor) == (req.session_id, req.event_cursor)
            and last.status in (PENDING, REVISED)
        ):
            return given.answer(_outcome(s, brief, last), changed=False, reason="repeated")
        if req.if_revision is not None and (
            brief.revision != req.if_revision or (last is not None and last.status == PENDING)
        ):
            held = " (another save's windows are being revised)" if brief.revision == req.if_revision else ""
            raise OpError(409, f"the brief is at revision {brief.revision}{held}, not {req.if_revision}")
        if author is None:
            revision = brief.revision
            s.rollback()  # writes nothing: a brief this save made is not kept either
            return given.answer(_nothing(revision), changed=False, reason=NOT_REVISED)
        assert brief.id is not None  # locked, so stored
        record = BriefSave(
            brief_id=brief.id, session_id=req.session_id, event_cursor=req.event_cursor, author=author
        )
        if sections is not None:  # the agent's words, over the brief as it is: the events are not read
            record.status, record.finished_at = REVISED, now
            s.add(record)
            s.flush()
            assert record.id is not None  # flushed
            refused = brief_store.revise(s, brief, sections, AGENT, req.session_id, record.id, now)
            brief.last_save_id = record.id
            given = replace(given, refused_sections=refused)
            return given.answer(_outcome(s, brief, record), changed=True, reason=None)
        events, screened_out = brief_events.screened(req.events)
        settings = get_settings()
        cut, dropped = brief_events.windows(
            events, settings.session_brief_window_chars, settings.session_brief_max_windows
        )
        given = replace(given, screened_out=screened_out, dropped=dropped)
        if not cut:
            revision = brief.revision
            s.rollback()
            return given.answer(_nothing(revision), changed=False, reason=NOT_REVISED)
        record.windows = len(cut)
        s.add(record)
        s.flush()
        assert record.id is not None  # flushed
        windows = [BriefWindow(save_id=record.id, position=i, events=window) for i, window in enumerate(cut)]
        s.add_all(windows)
        s.flush()
        assert windows[0].id is not None  # flushed
        first = request_window(s, windows[0].id)
        if summary := brief_events.client_summary(events):
            brief.client_summary = summary
        brief.last_save_id = record.id
        s.add(brief)
        save_id = record.id

    assert first.id is not None  # a stored run
    outbox.wake(BRIEF_WINDOW, [first.id])
    return _waited(given, save_id, req.wait_seconds)


def _nothing(revision: int) -> _Outcome:
    """A save that wrote nothing: the brief as it was."""
    none = WindowCounts(total=0, revised=0, failed=0, not_revised=0, pending=0)
    return _Outcome(revision=revision, author=None, save_id=None, windows=none, run_ids=[])


def _outcome(s: Session, brief: SessionBrief, record: BriefSave) -> _Outcome:
    assert record.id is not None  # a stored save
    windows = brief_store.windows(s, record.id)
    counts = {
        status: sum(1 for w in windows if w.status == status)
        for status in (REVISED, FAILED, NOT_REVISED, PENDING)
    }
    keys = [BRIEF_WINDOW.key(stored(w.id), "1") for w in windows]
    runs = (
        s.exec(select(StageRun).where(col(StageRun.idem_key).in_(keys)).order_by(col(StageRun.id))).all()
        if keys
        else []
    )
    still = record.status == PENDING
    return _Outcome(
        revision=brief.revision,
        author=record.author,
        save_id=record.id,
        windows=WindowCounts(
            total=len(windows),
            revised=counts[REVISED],
            failed=counts[FAILED],
            not_revised=counts[NOT_REVISED],
            pending=counts[PENDING],
        ),
        run_ids=[stored(run.id) for run in runs if not still or run.status in ("pending", "running")],
    )


def _waited(given: _Given, save_id: int, seconds: float) -> Waiting:
    """The save's outcome once its windows are done, or as it stands after ``seconds``."""

    def check(final: bool) -> SaveAnswer | Watch:
        with db.session() as s:
            record = s.get(BriefSave, save_id)
            assert record is not None  # the save this op stored
            brief = s.get(SessionBrief, record.brief_id)
            assert brief is not None  # the save's brief
            outcome = _outcome(s, brief, record)
        if record.status == PENDING and not final:
            return Watch(frozenset(outcome.run_ids))
        if record.status == FAILED:
            raise OpError(503, "no window of the save could be revised (the model failed); send it again")
        reasons: dict[str, Reason] = {PENDING: "pending", NOT_REVISED: NOT_REVISED}
        reason = reasons.get(record.status)
        return given.answer(outcome, changed=record.status == REVISED, reason=reason)

    return Waiting(check, seconds)


# --- reads and delete ----------------------------------------------------------------------------
