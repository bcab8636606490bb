"""Reflection (memory.reflect): what a question draws on in a loom, and how those threads bear on
each other. Deterministic: the same threads give the same knots and tensions, whatever writes the
answer's prose.

- The **cited** threads are the loom's hybrid search hits for the question; their **neighbours**
  are the live threads that share a subject (case folded), a cue or an evidence id with one of
  them. A thread whose text reads as high under this build's rules (one written under older ones)
  is left out of both, and counted.
- A **knot** is a subject, cue or evidence id that ties two or more of those threads together, one
  of them cited: threads that bear on each other.
- A **tension** is two threads that disagree: both Semantic or both Procedural (events do not
  contradict each other), sharing a subject, about the same thing (most of their words in common,
  or vectors at least ``SAME_THING_SIMILARITY`` alike) and saying it differently. The newer one
  ``supersedes`` the older (graphiti's rule: the later statement wins, the older is kept for
  history); two said at the same instant ``differ``. A thread on the same subject and thing whose
  ``until`` has passed is an ``expired`` tension with the live one (named by id only: a thread past
  its ``until`` is not served).

Night weaving acts on ``supersedes`` (``superseded``): the older thread's ``until`` becomes the
newer one's creation, so it stops being woven or returned and stays for history."""

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal
from uuid import UUID

import numpy as np
from pydantic import BaseModel, Field
from sqlmodel import Session, col, select

from models.memory import MemoryThread
from models.queries import memory as queries
from pipelines import hybrid, memory, screening

NEIGHBOURS = 20  # close neighbours read beside the cited threads
SHOWN = 20  # knots, and tensions, a reflection shows at most
SAME_THING_WORDS = 0.5  # Jaccard of two texts' words: about the same thing
SAME_THING_SIMILARITY = 0.85  # cosine of two vectors of one model: about the same thing
TENSE_KINDS = ("Semantic", "Procedural")
STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were will "
    "with".split()
)
INSTRUCTIONS = (
    "You answer a question from an agent's memory: the numbered memory threads below, each with its "
    "id as [t:xxxxxxxx], its date, kind and subjects, then the knots (threads that bear on each "
    "other) and tensions (threads that disagree) found among them. Answer in a few sentences from "
    "these threads only, citing the id of every thread you draw on. Where threads disagree, do not "
    "pick one: present both, say that they disagree, and say which is newer (the more recent "
    "statement supersedes the older one). If the threads do not answer the question, say that "
    "memory does not tell; never invent anything they do not say."
)

Shares = Literal["subject", "cue", "evidence"]
TensionType = Literal["supersedes", "differs", "expired"]


@dataclass(frozen=True)
class Knot:
    shares: Shares
    value: str  # the subject or cue as first spelled, or the evidence id
    threads: tuple[UUID, ...]


@dataclass(frozen=True)
class Tension:
    type: TensionType
    older: UUID  # the expired one, for an ``expired`` tension; either, when they ``differ``
    newer: UUID
    subject: str
    kind: str
    until: datetime | None = None  # when the expired one stopped being true

    @property
    def threads(self) -> tuple[UUID, UUID]:
        return self.older, self.newer


@dataclass
class Drawn:
    """What a reflection draws on: the cited threads, their live neighbours, those past their
    ``until`` (by id only), the knots and tensions among them, and how many were withheld."""

    cited: list[MemoryThread]
    neighbours: list[MemoryThread] = field(default_factory=list)
    expired: list[MemoryThread] = field(default_factory=list)
    knots: list[Knot] = field(default_factory=list)
    tensions: list[Tension] = field(default_factory=list)
    withheld: int = 0

    @property
    def seen(self) -> list[UUID]:
        """The live threads the knots and tensions show."""
        live = {t.id for t in [*self.cited, *self.neighbours]}
        shown = [i for k in self.knots for i in k.threads] + [i for t in self.tensions for i in t.threads]
        return [i for i in dict.fromkeys(shown) if i in live]

    @property
    def shown(self) -> list[MemoryThread]:
        """The live threads the answer serves: the cited, then the neighbours it shows."""
        seen = set(self.seen)
        return [*self.cited, *(t for t in self.neighbours if t.id in seen)]


class Reflected(BaseModel):
    """The model's answer."""

    answer: str = Field(min_length=1, max_length=4_000, description="the answer, citing [t:xxxxxxxx] ids")


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 1 and w not in STOPWORDS}


def _folded(values: list[str]) -> dict[str, str]:
    """Each value case folded, to its first spelling."""
    out: dict[str, str] = {}
    for value in values:
        out.setdefault(value.strip().casefold(), value.strip())
    return out


def _cosine(a: MemoryThread, b: MemoryThread) -> float | None:
    if a.vector is None or b.vector is None or a.model is None or a.model != b.model:
        return None
    x, y = np.asarray(a.vector, dtype=float), np.asarray(b.vector, dtype=float)
    norms = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / norms if norms else None


def same_thing(a: MemoryThread, b: MemoryThread) -> bool:
    """Whether two threads are about the same thing: most of their words in common, or their
    vectors alike."""
    wa, wb = words(a.content), words(b.content)
    if wa and wb and len(wa & wb) / len(wa | wb) >= SAME_THING_WORDS:
        return True
    similarity = _cosine(a, b)
    return similarity is not None and similarity >= SAME_THING_SIMILARITY


def _shared_subject(a: MemoryThread, b: MemoryThread) -> str | None:
    sa, sb = _folded(a.subjects), _folded(b.subjects)
    shared = sorted(set(sa) & set(sb))
    return sa[shared[0]] if shared else None


def _bear(a: MemoryThread, b: MemoryThread) -> str | None:
    """The subject two threads disagree on, when they do: same kind (one that can be
    contradicted), a shared subject, the same thing said differently."""
    if a.kind != b.kind or a.kind not in TENSE_KINDS:
        return None
    if " ".join(a.content.split()).casefold() == " ".join(b.content.split()).casefold():
        return None
    subject = _shared_subject(a, b)
    return subject if subject is not None and same_thing(a, b) else None


def _order(a: MemoryThread, b: MemoryThread) -> tuple[MemoryThread, MemoryThread]:
    """(older, newer), by creation; ties by id, so the pair is always named the same way."""
    return (a, b) if (a.created_at, str(a.id)) <= (b.created_at, str(b.id)) else (b, a)


def tensions(
    cited: list[MemoryThread], others: list[MemoryThread], expired: list[MemoryThread]
) -> list[Tension]:
    """The tensions among the cited threads and their live neighbours (each pair holding a cited
    one), and between a cited thread and one past its ``until``."""
    cited_ids = {t.id for t in cited}
    live = list({t.id: t for t in [*cited, *others]}.values())
    found: list[Tension] = []
    for i, a in enumerate(live):
        for b in live[i + 1 :]:
            if (a.id not in cited_ids and b.id not in cited_ids) or (subject := _bear(a, b)) is None:
                continue
            older, newer = _order(a, b)
            kind: TensionType = "differs" if older.created_at == newer.created_at else "supersedes"
            found.append(Tension(kind, older.id, newer.id, subject, a.kind))
    for gone in expired:
        for a in cited:
            if (subject := _bear(gone, a)) is not None:
                found.append(Tension("expired", gone.id, a.id, subject, a.kind, gone.until))
    return found[:SHOWN]


def knots(cited: list[MemoryThread], others: list[MemoryThread]) -> list[Knot]:
    """Each subject, cue or evidence id that two or more of the threads share, one of them cited;
    those tying more threads first."""
    cited_ids = {t.id for t in cited}
    groups: dict[tuple[str, str], list[UUID]] = {}
    spelled: dict[tuple[str, str], str] = {}
    for thread in list({t.id: t for t in [*cited, *others]}.values()):
        values = [
            *(("subject", k, v) for k, v in _folded(thread.subjects).items()),
            *(("cue", k, v) for k, v in _folded(thread.cues).items()),
            *(("evidence", str(e), str(e)) for e in dict.fromkeys(thread.evidence_ids)),
        ]
        for shares, key, value in values:
            groups.setdefault((shares, key), []).append(thread.id)
            spelled.setdefault((shares, key), value)
    tied = [
        Knot(shares, spelled[(shares, key)], tuple(ids))  # type: ignore[arg-type]
        for (shares, key), ids in groups.items()
        if len(ids) > 1 and cited_ids & set(ids)
    ]
    return sorted(tied, key=lambda k: (-len(k.threads), k.shares, k.value))[:SHOWN]


def readable(threads: list[MemoryThread]) -> list[MemoryThread]:
    """Those whose text does not read as high under this build's rules."""
    return [t for t in threads if not screening.is_high(t.content)]


def neighbours(s: Session, loom_id: UUID, cited: list[MemoryThread], limit: int) -> list[MemoryThread]:
    """The loom's threads, not cut, that share a subject (case folded), a cue or an evidence id with
    a cited one, heaviest and newest first (live or past their ``until``: the caller splits them)."""
    if not cited:
        return []
    params = {
        "loom": loom_id,
        "ids": [t.id for t in cited],
        "subjects": sorted({v.lower() for t in cited for v in t.subjects}),
        "cues": sorted({v for t in cited for v in t.cues}),
        "evidence": sorted({e for t in cited for e in t.evidence_ids}),
        "limit": limit,
    }
    ids = list(s.execute(queries.NEIGHBOURS, params).scalars())
    found = {t.id: t for t in s.exec(select(MemoryThread).where(col(MemoryThread.id).in_(ids)))}
    return [found[i] for i in ids if i in found]


def gather(s: Session, loom_id: UUID, q: hybrid.Query, clock: hybrid.Clock, now: datetime) -> Drawn:
    """What the question draws on in the loom, and the knots and tensions among it."""
    hits = [hit.thread for hit in memory.search(s, loom_id, q, clock, None, now).hits]
    near = neighbours(s, loom_id, hits, NEIGHBOURS)
    cited = readable(hits)
    close = readable(near)
    live = [t for t in close if t.until is None or t.until > now]
    expired = [t for t in close if t.until is not None and t.until <= now]
    return Drawn(
        cited=cited,
        neighbours=live,
        expired=expired,
        knots=knots(cited, live),
        tensions=tensions(cited, live, expired),
        withheld=len(hits) - len(cited) + len(near) - len(close),
    )


# --- the answer ------------------------------------------------------------------------------------


def short(thread_id: UUID) -> str:
    return f"[t:{thread_id.hex[:8]}]"


def thread_line(thread: MemoryThread) -> str:
    about = f", about {', '.join(thread.subjects)}" if thread.subjects else ""
    content = " ".join(thread.content.split())
    return f"{short(thread.id)} {thread.created_at:%Y-%m-%d} {thread.kind}{about}: {content}"


def knot_line(knot: Knot) -> str:
    return f"{', '.join(short(i) for i in knot.threads)} share {knot.shares} {knot.value!r}"


def tension_line(tension: Tension) -> str:
    on = f"on {tension.subject!r} ({tension.kind})"
    if tension.type == "supersedes":
        return f"{short(tension.newer)} is newer than {short(tension.older)} and supersedes it, {on}"
    if tension.type == "differs":
        return f"{short(tension.older)} and {short(tension.newer)} say it differently at the same time, {on}"
    assert tension.until is not None
    ended = f"{tension.until:%Y-%m-%d %H:%M} UTC"
    return f"{short(tension.older)} stopped being true at {ended}, {on}; see {short(tension.newer)}"


def relations(drawn: Drawn) -> list[str]:
    """The knots and tensions as lines (ids, subjects and cues: no thread's words)."""
    lines = [f"Knot: {knot_line(k)}" for k in drawn.knots]
    return lines + [f"Tension: {tension_line(t)}" for t in drawn.tensions]


def built(drawn: Drawn) -> str:
    """The deterministic builder's answer: the threads drawn on, verbatim, and the knots and
    tensions, in fixed forms; nothing else."""
    return "\n".join([*(thread_line(t) for t in drawn.shown), *relations(drawn)])


def prompt(question: str, threads: list[MemoryThread], related: list[str], budget: int) -> str:
    """The model's prompt: the question, the threads (those that fit ``budget`` characters, in
    order) and the knots and tensions."""
    head = f"Question: {' '.join(question.split())}\n\nMemory threads:\n"
    tail = "\n\nKnots and tensions:\n" + ("\n".join(related) if related else "none")
    room = budget - len(head) - len(tail)
    lines = []
    for thread in threads:
        line = thread_line(thread)
        if len(line) + 1 > room:
            break
        lines.append(line)
        room -= len(line) + 1
    return head + "\n".join(lines) + tail


# --- night weaving ---------------------------------------------------------------------------------


def superseded(s: Session, loom_id: UUID, threads: list[MemoryThread], now: datetime) -> list[dict]:
    """Act on the tensions of these threads with their neighbours: an older thread a newer one
    supersedes stops being true when the newer was written (its ``until``), unless it is pinned
    (the person's choice): of several newer ones, the first. What changed: each such thread, by which, and
    its ``until``. Run twice, the second finds the older threads no longer live: nothing."""
    live = [t for t in threads if t.cut_at is None and (t.until is None or t.until > now)]
    near = [t for t in neighbours(s, loom_id, live, NEIGHBOURS * 5) if t.until is None or t.until > now]
    by_id = {t.id: t for t in [*live, *near]}
    ends: dict[UUID, MemoryThread] = {}
    for tension in tensions(live, near, []):
        older, newer = by_id[tension.older], by_id[tension.newer]
        if tension.type != "supersedes" or older.pinned:
            continue
        if tension.older not in ends or newer.created_at < ends[tension.older].created_at:
            ends[tension.older] = newer
    changed = []
    for older_id, newer in sorted(ends.items(), key=lambda item: str(item[0])):
        older = by_id[older_id]
        memory.end(s, older, newer.created_at, now)
        changed.append({"thread": str(older.id), "by": str(newer.id), "until": newer.created_at.isoformat()})
    return changed
