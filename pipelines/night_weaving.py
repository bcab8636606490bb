"""Night weaving's work on one LoomSession: the turns to read, the episodes they make, the judgement
of what was suggested, and the writes that consolidate the session. Plain functions; the stage in
``workers/stages/night_weaving.py`` adds claiming, the model call and retries.

Each night reads only the session's turns after ``consolidatedUpToSequence`` (at most
``LOOM_NIGHT_WEAVING_MAX_TURNS``: a long conversation is consolidated night after night) and weaves
them into ``Episodic`` memory threads (basis ``Woven``) with the turns as their evidence: with the
LLM through instructor, or, without a provider, one episode the deterministic builder writes (who,
when, and the key turns). A turn that reads as high is never sent nor quoted.

Each thread suggested in the session and not judged yet is judged once: used when it was recalled,
woven or held in the session, and its weight rises by ``REINFORCE`` (to at most 1); unused, and its
weight is multiplied by ``DECAY`` (to at least 0). A thread held back after vetting and never used is
not counted as unused: it stays unjudged, and may be used later.

Each night acts on the tensions of the threads its session knew or wove with their neighbours
(``pipelines.reflecting``): an older thread that a newer one on the same subject and kind
supersedes ends when the newer was written (its ``until``), kept for history; a pinned one is left
to the person. What it ended is in the night's record (``superseded``)."""

from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID

from pydantic import BaseModel, Field
from sqlmodel import Session, col, select

from models.base import stored
from models.memory import WEIGHT_MAX, WEIGHT_MIN, LoomSession, MemoryEvidence, MemoryThread
from models.queries import memory as queries
from pipelines import extraction, keys, memory, prose, reflecting, screening

REINFORCE, DECAY = 0.1, 0.9
LINE_CHARS = 1_000  # of one turn, in the prompt
KEY_TURN_CHARS = 200  # of one turn the deterministic builder quotes
INSTRUCTIONS = (
    "You weave an agent's conversation into episodes it can remember later. Write one to five "
    "episodes, each a short paragraph in the past tense: what happened, who took part, what was "
    "decided or learned, and when. Cite the numbers of the lines each episode comes from."
)


class Episode(BaseModel):
    content: str = Field(min_length=1, max_length=2_000, description="the episode, a short paragraph")
    subjects: list[str] = Field(default_factory=list, description="the people and things in it")
    lines: list[int] = Field(default_factory=list, description="the numbers of the lines it comes from")


class Episodes(BaseModel):
    episodes: list[Episode] = Field(default_factory=list, max_length=5)


@dataclass(frozen=True)
class Turn:
    seq: int
    msg_id: str
    role: str
    content: str
    user_id: str | None
    ts: datetime
    sensitivity: str


def new_turns(s: Session, session: LoomSession, up_to: int, limit: int) -> list[Turn]:
    """The session's turns after what was consolidated, up to ``up_to``, at most ``limit``."""
    rows = s.execute(
        queries.NEW_TURNS,
        {
            "ns": session.namespace,
            "thread": session.thread_id,
            "agent": session.agent_name,
            "run": session.run_id,
            "after": session.consolidated_up_to_sequence,
            "up_to": up_to,
            "limit": limit,
        },
    ).all()
    return [Turn(*row) for row in rows]


def sendable(turns: list[Turn]) -> list[Turn]:
    return [t for t in turns if t.sensitivity != screening.HIGH and not screening.is_high(_line(0, t))]


def _line(n: int, turn: Turn) -> str:
    content = turn.content if len(turn.content) <= LINE_CHARS else turn.content[:LINE_CHARS] + " […]"
    return f"[{n}] {turn.ts:%Y-%m-%d %H:%M} {turn.role}: {content}"


def prompt(turns: list[Turn], budget: int) -> tuple[str, list[Turn]]:
    """The numbered lines sent, within ``budget`` characters, and the turn each number stands for."""
    lines: list[str] = []
    sent: list[Turn] = []
    room = budget
    for turn in turns:
        line = _line(len(sent) + 1, turn)
        if len(line) + 1 > room or screening.is_high(line):
            continue
        lines.append(line)
        sent.append(turn)
        room -= len(line) + 1
    return "\n".join(lines), sent


def built(session: LoomSession, turns: list[Turn]) -> Episodes:
    """The deterministic builder's episode, one sentence: who took part, when, how many turns, and
    the key turns quoted (the first and last thing a user said, the agent's last answer), none that
    reads as high; none when no turn says anything."""
    said = [t for t in turns if _cut(t.content)]
    if not said:
        return Episodes()
    people = list(dict.fromkeys(t.user_id for t in turns if t.user_id))
    agent = "the agent" if session.agent_name == "default" else session.agent_name
    users = [t for t in said if t.role == "user"]
    answers = [t for t in said if t.role == "assistant"]
    quoted = []
    if users:
        first, last = users[0], users[-1]
        if first is last:
            quoted.append(f"{_speaker(first)} said {_quote(first)}")
        else:
            again = "" if _speaker(first) == _speaker(last) else f"{_speaker(last)} "
            quoted.append(f"{_speaker(first)} first said {_quote(first)} and {again}last said {_quote(last)}")
    if answers:
        verb = ("" if len(answers) == 1 else "last ") + ("answered" if users else "said")
        quoted.append(f"{agent} {verb} {_quote(answers[-1])}")
    who = agent + (f" with {prose.joined(people)}" if people else "")
    turned = prose.counted(len(turns), "turn")
    content = prose.ended(f"In a conversation of {who} {_when(turns)} ({turned}), {'; '.join(quoted)}")
    key = [*users[:1], *users[-1:], *answers[-1:]]
    lines = sorted({turns.index(t) + 1 for t in key})
    return Episodes(episodes=[Episode(content=content, subjects=people, lines=lines)])


def _speaker(turn: Turn) -> str:
    return turn.user_id or "the user"


def _when(turns: list[Turn]) -> str:
    """``on 2026-11-01 at 10:00 UTC``, ``on 2026-11-01 from 10:00 to 11:30 UTC``, or ``from
    2026-11-01 10:00 to 2026-11-02 09:00 UTC``."""
    first, last = turns[0].ts.astimezone(UTC), turns[-1].ts.astimezone(UTC)
    if first.date() != last.date():
        return f"from {first:%Y-%m-%d %H:%M} to {last:%Y-%m-%d %H:%M} UTC"
    if f"{first:%H:%M}" == f"{last:%H:%M}":
        return f"on {first:%Y-%m-%d} at {first:%H:%M} UTC"
    return f"on {first:%Y-%m-%d} from {first:%H:%M} to {last:%H:%M} UTC"


def _cut(content: str) -> str:
    return prose.clipped(content, KEY_TURN_CHARS)


def _quote(turn: Turn) -> str:
    return f'"{_cut(turn.content)}"'


def judge(session: LoomSession) -> tuple[list[UUID], list[UUID]]:
    """(used, unused): the suggested threads not judged yet; a held-back one never used is neither."""
    used_in = set(session.recalled_thread_ids) | set(session.woven_thread_ids) | set(session.held_thread_ids)
    pending = [
        t for t in dict.fromkeys(session.suggested_thread_ids) if t not in set(session.judged_thread_ids)
    ]
    used = [t for t in pending if t in used_in]
    unused = [t for t in pending if t not in used_in and t not in set(session.held_back_thread_ids)]
    return used, unused


def reweigh(s: Session, used: list[UUID], unused: list[UUID], now: datetime) -> list[dict]:
    """Reinforce the used threads and decay the unused, within [WEIGHT_MIN, WEIGHT_MAX]; what
    changed, as the night's record keeps it: each thread's weight before and after."""
    if not (used or unused):
        return []
    params = {"step": REINFORCE, "max": WEIGHT_MAX, "factor": DECAY, "min": WEIGHT_MIN}
    rows = s.execute(queries.REWEIGH, {**params, "used": used, "unused": unused, "now": now}).all()
    return [
        {"thread": str(thread), "before": round(before, 4), "after": round(after, 4)}
        for thread, before, after in sorted(rows, key=lambda row: str(row[0]))
    ]


def supersede(s: Session, session: LoomSession, woven: list[MemoryThread], now: datetime) -> list[dict]:
    """End the threads that the session's known and woven threads supersede; what changed."""
    ids = [*session.known_thread_ids, *(t.id for t in woven)]
    return reflecting.superseded(s, session.loom_id, memory.still_live(s, ids, now), now)


@dataclass(frozen=True)
class NightChange:
    """What one night did for one session: the episodes it wrote, each judged thread's weight
    before and after (a night of an earlier Loom recorded counts only: both empty)."""

    session_id: UUID
    night_id: UUID
    at: datetime
    episode_ids: list[str]
    reweighed: list[dict]
    superseded: list[dict]  # each thread a newer one superseded: by which, until when


def changes(s: Session, loom_id: UUID, session_ids: list[UUID]) -> list[NightChange]:
    """What the nights changed for these sessions of the loom, oldest first."""
    rows = s.execute(queries.NIGHT_CHANGES, {"loom": loom_id, "sessions": session_ids}).all()
    return [
        NightChange(
            session,
            night,
            at,
            list((result or {}).get("episode_ids", [])),
            (result or {}).get("reweighed", []),
            (result or {}).get("superseded", []),
        )
        for session, night, at, result in rows
    ]


def woven(
    s: Session, session: LoomSession, episodes: Episodes, sent: list[Turn], loom, now: datetime
) -> list[MemoryThread]:
    """Write the episodes as memory threads, the turns they cite kept as their evidence. Keyed by
    the session and the range it consolidates, so weaving the same range again writes nothing new."""
    evidence = extraction.keep(
        s,
        loom,
        session.thread_id,
        session.run_id,
        session.agent_name,
        [extraction.Message(t.role, t.content, t.msg_id, t.ts, t.user_id) for t in sent],
        now,
    )
    by_msg = dict(
        s.exec(
            select(col(MemoryEvidence.msg_id), col(MemoryEvidence.id)).where(
                col(MemoryEvidence.id).in_(evidence)
            )
        ).all()
    )
    span = f"{sent[0].seq}-{sent[-1].seq}" if sent else "none"
    threads = []
    for i, episode in enumerate(episodes.episodes):
        content = " ".join(episode.content.split())
        if not content or screening.is_high(content):
            continue
        cited = [
            stored(by_msg[sent[n - 1].msg_id]) for n in dict.fromkeys(episode.lines) if 1 <= n <= len(sent)
        ]
        new = memory.NewMemory(
            content=content,
            kind="Episodic",
            weight=0.5,
            basis="Woven",
            subjects=[subject[:200] for subject in episode.subjects if subject.strip()][:32],
            agent=session.agent_name,
            run_id=session.run_id,
            evidence_ids=cited,
            source_key=keys.digest(str(session.id), span, str(i))[:32],
        )
        if (thread := memory.write(s, loom, new, now)) is not None:
            threads.append(thread)
    return threads


def open_runs(s: Session, weaving_id: UUID, closing_run_id: int) -> int:
    """How many of the night weaving's runs are still pending or running, besides the one closing."""
    return s.execute(queries.OPEN_NIGHT_RUNS, {"id": str(weaving_id), "me": closing_run_id}).scalar_one()
