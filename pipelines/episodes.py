"""A session's observations (a coding agent's tool actions) as Episodic memory threads: what
``observe.crystallize`` hands the extraction stage, and what it writes from them.

Each observation is kept as evidence (role ``tool``, msg_id ``obs:<id>``: ``memory.recall`` finds
it) as one line. The model, when there is one, is asked for the episodes worth remembering, citing
those lines; without one the deterministic builder here still writes them (the one place where no
model still gives memories): one episode for the batch (where it worked, what it ran, what failed)
and one per failed action (with whether it later succeeded). Each is keyed, so writing a batch's
episodes twice writes them once."""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from sqlmodel import Session, col, select

from models.base import stored
from models.memory import MemoryEvidence
from models.observation import Observation
from pipelines import keys, memory, screening

ROLE = "tool"
MSG_PREFIX = "obs:"
INSTRUCTIONS = (
    "You keep the memory of a coding agent's work. The lines are the tool actions of one session, "
    "in order. List the episodes worth remembering later: what was worked on (name the files), "
    "what was run, what failed and why, and what fixed it. Write each episode as one short "
    "self-contained sentence in the past tense. Cite the numbers of the lines each comes from. "
    "Return no episodes when nothing happened worth remembering."
)
SHOWN_FILES, SHOWN_FAILURES, FAILURE_EPISODES = 8, 3, 5


@dataclass(frozen=True)
class Action:
    """An observation as the builder reads it."""

    evidence_id: int
    tool: str
    input_sha256: str
    summary: str
    outcome: str
    files: tuple[str, ...]
    error: str | None
    ts: datetime


def line(tool: str, summary: str, outcome: str, files: list[str], error: str | None) -> str:
    """The evidence line of an action: what the model reads, and memory.recall finds."""
    text = f"{tool}: {summary}"
    if files and not any(f in summary for f in files):
        text += f" [files: {', '.join(files[:SHOWN_FILES])}]"
    if outcome == "error":
        first = _first_line(error, 300)
        text += f" -> failed: {first}" if first else " -> failed"
    return text


def _first_line(error: str | None, chars: int) -> str:
    return error.strip().splitlines()[0][:chars] if error and error.strip() else ""


def msg_id(observation_id: int) -> str:
    return f"{MSG_PREFIX}{observation_id}"


def _names(actions: list[Action]) -> list[str]:
    return list(dict.fromkeys(f for a in actions for f in a.files))


def built(
    loom_id: UUID, session_id: str, where: str | None, actions: list[Action], agent: str, run_id: str | None
) -> list[memory.NewMemory]:
    """The deterministic episodes of a batch of actions (in the order they ran; none reads as
    high, ``batch``), none that reads as high. ``where``: "project/branch", when known."""
    if not actions:
        return []
    files, failed = _names(actions), [a for a in actions if a.outcome == "error"]
    place = f" on {where}" if where else ""
    text = f"In session {session_id}{place} the agent ran {len(actions)} tool actions"
    if files:
        more = f" and {len(files) - SHOWN_FILES} more" if len(files) > SHOWN_FILES else ""
        text += f", working on {', '.join(files[:SHOWN_FILES])}{more}"
    if failed:
        shown = "; ".join(f"`{a.summary}`" for a in failed[:SHOWN_FAILURES])
        text += f"; {len(failed)} failed ({shown})"
    text += "."
    key = keys.digest(
        str(loom_id), session_id, "batch", str(actions[0].evidence_id), str(actions[-1].evidence_id)
    )
    episodes = [_episode(text, files, [a.evidence_id for a in actions], key, agent, run_id)]
    for action in failed[:FAILURE_EPISODES]:
        later = [a for a in actions[actions.index(action) + 1 :] if _same(a, action) and a.outcome == "ok"]
        text = f"In session {session_id}{place} `{action.summary}` ({action.tool}) failed"
        first = _first_line(action.error, 200)
        text += f": {first}" if first else ""
        text += "; it later succeeded." if later else "."
        cited = [action.evidence_id] + ([later[0].evidence_id] if later else [])
        key = keys.digest(str(loom_id), session_id, "failure", str(action.evidence_id))
        episodes.append(_episode(text, list(action.files), cited, key, agent, run_id))
    return [e for e in episodes if not screening.is_high(e.content)]


def _same(a: Action, b: Action) -> bool:
    return a.tool == b.tool and (a.input_sha256 == b.input_sha256 or a.summary == b.summary)


def _episode(
    text: str, files: list[str], cited: list[int], key: str, agent: str, run_id: str | None
) -> memory.NewMemory:
    return memory.NewMemory(
        content=text[:2_000],
        kind="Episodic",
        weight=0.5,
        basis="Extracted",
        subjects=[f[:200] for f in files[:32]],
        agent=agent,
        run_id=run_id,
        evidence_ids=cited,
        source_key=key[:32],
    )


@dataclass(frozen=True)
class Batch:
    actions: list[Action]
    where: str | None  # "project/branch" of the session's actions, when they say


def batch(s: Session, evidence: list[MemoryEvidence]) -> Batch:
    """The evidence of a batch as the actions it keeps (in the order they ran), none that reads as
    high; an observation erased since is left out."""
    ids = [int(row.msg_id.removeprefix(MSG_PREFIX)) for row in evidence if row.msg_id.startswith(MSG_PREFIX)]
    seen = {msg_id(stored(o.id)): o for o in s.exec(select(Observation).where(col(Observation.id).in_(ids)))}
    actions = [
        Action(stored(row.id), o.tool, o.input_sha256, o.summary, o.outcome, tuple(o.files), o.error, row.ts)
        for row in sorted(evidence, key=lambda e: (e.ts, e.id))
        if (o := seen.get(row.msg_id)) is not None and row.sensitivity != screening.HIGH
    ]
    placed = next((o for o in seen.values() if o.project), None)
    where = (
        f"{placed.project}/{placed.branch}"
        if placed and placed.branch
        else placed.project
        if placed
        else None
    )
    return Batch(actions, where)
