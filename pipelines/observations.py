"""A coding agent's tool actions (``models.observation``): stored once each, screened as turns
are, and taken a batch at a time to be crystallized, kept as the loom's evidence for the
extraction stage to make Episodic memories of (``pipelines.episodes``). Plain functions in the
caller's transaction."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select

from models.base import stored
from models.memory import Loom
from models.observation import Observation
from pipelines import episodes, extraction, keys, screening

CRYSTALLIZE_MAX = 500  # actions a crystallize takes; the rest wait for the next one


@dataclass(frozen=True)
class Action:
    """One action as its session's hooks report it."""

    key: str | None  # the client's id for it
    tool: str
    input_sha256: str
    summary: str
    outcome: str
    files: list[str]
    error: str | None
    ts: datetime


@dataclass(frozen=True)
class Origin:
    """The coding session the actions belong to, and what it works on."""

    namespace: str
    session_id: str
    run_id: str | None
    agent: str
    user_id: str | None
    project: str | None
    branch: str | None


def action_key(action: Action) -> str:
    """What makes an action the same one again: the client's id for it, else a digest of what it
    was and when."""
    return (
        action.key
        or "d-" + keys.digest(action.tool, action.input_sha256, action.summary, action.ts.isoformat())[:40]
    )


def rows(origin: Origin, actions: list[Action], now: datetime) -> list[dict]:
    """The actions as observation rows, each screened by the line it makes."""
    out = []
    for action in actions:
        text = episodes.line(action.tool, action.summary, action.outcome, action.files, action.error)
        out.append(
            {
                "namespace": origin.namespace,
                "session_id": origin.session_id,
                "action_key": action_key(action),
                "run_id": origin.run_id,
                "agent": origin.agent,
                "user_id": origin.user_id,
                "project": origin.project,
                "branch": origin.branch,
                "tool": action.tool,
                "input_sha256": action.input_sha256,
                "summary": action.summary,
                "outcome": action.outcome,
                "files": action.files,
                "error": action.error,
                "sensitivity": screening.screen(text).level,
                "ts": action.ts,
                "created_at": now,
            }
        )
    return out


def store(s: Session, observations: list[dict]) -> list[str]:
    """Store the rows not stored before; the sensitivity of each one stored."""
    inserted = insert(Observation).values(observations).on_conflict_do_nothing()
    return list(s.exec(inserted.returning(col(Observation.sensitivity))).scalars())


@dataclass(frozen=True)
class Taken:
    """A crystallize's batch: the evidence its actions became, and how many wait for the next."""

    actions: int
    evidence_ids: list[int]
    remaining: int


def take(s: Session, loom: Loom, session_id: str, run_id: str | None, agent: str, now: datetime) -> Taken:
    """The session's actions not crystallized yet, the oldest ``CRYSTALLIZE_MAX``, kept as the
    loom's evidence and marked crystallized."""
    of_session = (
        col(Observation.namespace) == loom.namespace,
        col(Observation.session_id) == session_id,
        col(Observation.crystallized_at).is_(None),
    )
    # Locked: two crystallizes of one session take each action once.
    taken = s.exec(
        select(Observation)
        .where(*of_session)
        .order_by(col(Observation.ts), col(Observation.id))
        .limit(CRYSTALLIZE_MAX)
        .with_for_update(skip_locked=True)
    ).all()
    remaining = s.exec(select(func.count()).where(*of_session)).one() - len(taken)
    if not taken:
        return Taken(0, [], remaining)
    messages = [
        extraction.Message(
            role=episodes.ROLE,
            content=episodes.line(o.tool, o.summary, o.outcome, list(o.files), o.error),
            msg_id=episodes.msg_id(stored(o.id)),
            ts=o.ts,
            user_id=o.user_id,
        )
        for o in taken
    ]
    ids = extraction.keep(s, loom, session_id, run_id, agent, messages, now)
    for o in taken:
        o.crystallized_at = now
        s.add(o)
    return Taken(len(taken), ids, remaining)
