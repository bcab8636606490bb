"""A session brief's save (session.brief_save), in the caller's transaction: the brief made or
found and locked, a save repeating the previous one recognized, the agent's own sections written
over the brief at once, or the events screened, cut into windows and stored for the
``brief_window`` stage to condense in order; and where a save stands, from its windows.

Who condenses a save of events alone: the model, the deterministic builder, or no one (then the
save writes nothing, and a brief it made is not kept either)."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select

from models.base import stored
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
from pipelines import brief_events, brief_store
from providers import llm


def events_author(use_llm: bool, deterministic_fallback: bool) -> str | None:
    """Who condenses a save of events alone: the model, the builder, or no one (not revised)."""
    settings = get_settings()
    if not settings.session_brief_model_calls:
        return None  # the operator's switch stops the model and the builder alike
    if not settings.session_brief_llm:
        return DETERMINISTIC
    if not use_llm or isinstance(llm.get_brief_llm(), llm.FakeLLM):
        return DETERMINISTIC if deterministic_fallback else None
    return LLM


@dataclass(frozen=True)
class Address:
    """Where a save goes: the brief's stored key, and what a new brief is made with."""

    namespace: str
    key: str
    project: str | None
    branch: str | None
    written_by: str


def locked(s: Session, address: Address, now: datetime) -> SessionBrief:
    """The brief, made (revision 0) or found, locked for the save."""
    s.exec(
        insert(SessionBrief)
        .values(
            namespace=address.namespace,
            brief_key=address.key,
            project=address.project,
            branch=address.branch,
            written_by=address.written_by,
            created_at=now,
            updated_at=now,
        )
        .on_conflict_do_nothing(index_elements=["namespace", "brief_key"])
    )
    query = select(SessionBrief).where(
        col(SessionBrief.namespace) == address.namespace, col(SessionBrief.brief_key) == address.key
    )
    return s.exec(query.with_for_update()).one()


def last_save(s: Session, brief: SessionBrief) -> BriefSave | None:
    return s.get(BriefSave, brief.last_save_id) if brief.last_save_id else None


def repeats(last: BriefSave | None, session_id: str | None, event_cursor: str | None) -> bool:
    """A save naming the session and event cursor of the brief's last save (not failed, nor left
    unrevised) is that save again."""
    return (
        last is not None
        and session_id is not None
        and event_cursor is not None
        and (last.session_id, last.event_cursor) == (session_id, event_cursor)
        and last.status in (PENDING, REVISED)
    )


def unsaved(s: Session, brief: SessionBrief) -> int:
    """Nothing written: the transaction rolled back (a brief this save made is not kept either);
    the brief's revision as it was."""
    revision = brief.revision
    s.rollback()
    return revision


def save_sections(
    s: Session,
    brief: SessionBrief,
    sections: dict,
    session_id: str | None,
    event_cursor: str | None,
    now: datetime,
) -> tuple[BriefSave, list[str]]:
    """The agent's words written over the brief as it is (no events read); the save, and the
    sections refused as reading high."""
    record = BriefSave(
        brief_id=stored(brief.id),
        session_id=session_id,
        event_cursor=event_cursor,
        author=AGENT,
        status=REVISED,
        finished_at=now,
    )
    s.add(record)
    s.flush()
    refused = brief_store.revise(s, brief, sections, AGENT, session_id, stored(record.id), now)
    brief.last_save_id = record.id
    return record, refused


@dataclass(frozen=True)
class Cut:
    """A save of events as stored: its id and first window (none when no window was left, and the
    brief's revision as it was), and the events screened out and dropped."""

    revision: int
    save_id: int | None
    first_window: int | None
    screened_out: int
    dropped: int


def save_events(
    s: Session,
    brief: SessionBrief,
    events: list[brief_events.Event],
    session_id: str | None,
    event_cursor: str | None,
    author: str,
    now: datetime,
) -> Cut:
    """The events screened (one that reads as high is dropped), cut into windows and stored with
    the save; with no window left, nothing is written (as ``unsaved``)."""
    kept, screened_out = brief_events.screened(events)
    settings = get_settings()
    cut, dropped = brief_events.windows(
        kept, settings.session_brief_window_chars, settings.session_brief_max_windows
    )
    if not cut:
        return Cut(unsaved(s, brief), None, None, screened_out, dropped)
    record = BriefSave(
        brief_id=stored(brief.id),
        session_id=session_id,
        event_cursor=event_cursor,
        author=author,
        windows=len(cut),
    )
    s.add(record)
    s.flush()
    windows = [
        BriefWindow(save_id=stored(record.id), position=i, events=window) for i, window in enumerate(cut)
    ]
    s.add_all(windows)
    s.flush()
    if summary := brief_events.client_summary(kept):
        brief.client_summary = summary
    brief.last_save_id = record.id
    s.add(brief)
    return Cut(brief.revision, stored(record.id), stored(windows[0].id), screened_out, dropped)


@dataclass(frozen=True)
class Progress:
    """Where a save stands: the brief's revision, the save's windows counted by status, and their
    runs (only those still to wait on while the save is pending)."""

    revision: int
    author: str | None
    save_id: int
    status: str
    windows: int
    counts: dict[str, int]
    run_ids: list[int]


def progress(s: Session, brief: SessionBrief, record: BriefSave) -> Progress:
    """The save's course from its windows and their runs."""
    windows = brief_store.windows(s, stored(record.id))
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
    return Progress(
        revision=brief.revision,
        author=record.author,
        save_id=stored(record.id),
        status=record.status,
        windows=len(windows),
        counts=counts,
        run_ids=[stored(run.id) for run in runs if not still or run.status in ("pending", "running")],
    )


def of_save(s: Session, save_id: int) -> tuple[BriefSave, SessionBrief]:
    """A stored save and its brief."""
    record = s.get(BriefSave, save_id)
    assert record is not None  # a save the op stored
    brief = s.get(SessionBrief, record.brief_id)
    assert brief is not None  # the save's brief
    return record, brief
