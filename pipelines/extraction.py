"""Extraction: turning messages handed to memory.set_from_messages into memory threads.

The op keeps each message as evidence (``memory_evidence``: the turns extraction read, whether or
not the namespace records transcripts; ``memory.recall`` reads them) and requests one extraction
run for the batch. The stage numbers the messages that may be sent (never one that reads as high,
nor a line that would read as high as cut), asks the LLM for typed facts citing those numbers, and
writes each fact as an ``Extracted`` memory thread with the evidence it cites. A fact is keyed by
its loom and text (``source_key``), so extracting the same batch twice writes each fact once.

The prompt also lists what the loom already holds on the matter (``known``: its live facts and
procedures closest to the lines by their words, labelled m1, m2 …), and a fact names the labels of
those it makes untrue (``replaces``): a decision reversed, a value changed. Those stop being true
when the fact is written (their ``until``, graphiti's edge invalidation), so the next tapestry
carries the new fact without the old one beside it.
memory.recall finds the evidence again by its words (``recalled``: BM25, the loom its corpus)."""

from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, Field
from sqlmodel import Session, col, select

from models.base import stored
from models.memory import Loom, MemoryEvidence, MemoryThread
from models.queries import memory as queries
from models.queries import search as search_queries
from pipelines import keys, lexical, memory, screening

INSTRUCTIONS = (
    "You extract durable memories from a conversation. List the facts worth remembering later: "
    "who the people are, what they prefer, plan, decided, did or own, and how to do things that "
    "were worked out. Write each fact as one short self-contained sentence that names who it is "
    "about. Cite the numbers of the lines each fact comes from. Leave out greetings, questions and "
    "anything the lines do not state. Return no facts when there are none. Give each fact the "
    "short phrases someone would say when it matters again (cues). When a fact makes one of the "
    "already remembered facts untrue (a decision reversed, a value changed), name that one's label "
    "in replaces; a fact that only adds to one replaces nothing."
)
LINE_CHARS = 2_000  # of one message, in the prompt
KNOWN = 12  # already remembered threads listed in the prompt, at most
KNOWN_QUERY_CHARS = 4_000  # of the lines, as the words that find them
CUES, CUE_CHARS = 8, 100  # a fact's cues kept, at most, and their length


class Fact(BaseModel):
    content: str = Field(min_length=1, max_length=2_000, description="the fact, one sentence")
    kind: Literal["Semantic", "Episodic", "Procedural"] = Field(
        default="Semantic", description="Semantic: a fact; Episodic: an event; Procedural: how to do a thing"
    )
    subjects: list[str] = Field(default_factory=list, description="the people and things it is about")
    lines: list[int] = Field(default_factory=list, description="the numbers of the lines it comes from")
    cues: list[str] = Field(
        default_factory=list, description="short phrases that, said later, should bring the fact back"
    )
    replaces: list[str] = Field(
        default_factory=list, description="labels (m1, m2 …) of remembered facts this one makes untrue"
    )


class Facts(BaseModel):
    facts: list[Fact] = Field(default_factory=list, description="the memories, possibly none")


@dataclass(frozen=True)
class Message:
    role: str
    content: str
    msg_id: str
    ts: datetime
    user_id: str | None = None


def keep(
    s: Session,
    loom: Loom,
    thread_id: str,
    run_id: str | None,
    agent: str,
    messages: list[Message],
    now: datetime,
) -> list[int]:
    """Keep the messages as evidence (screened; a message kept before stays as it was); their ids."""
    ids = s.execute(
        queries.KEEP_EVIDENCE,
        {
            "loom": loom.id,
            "ns": loom.namespace,
            "thread": thread_id,
            "agent": agent,
            "run": run_id,
            "now": now,
            "msg_ids": [m.msg_id for m in messages],
            "roles": [m.role for m in messages],
            "contents": [m.content for m in messages],
            "users": [m.user_id for m in messages],
            "ts": [m.ts for m in messages],
            "sensitivities": [screening.screen(m.content).level for m in messages],
        },
    ).scalars()
    return sorted(ids)


def prompt(evidence: list[MemoryEvidence], budget: int) -> tuple[str, list[MemoryEvidence]]:
    """The numbered lines sent (never one that reads as high) within ``budget`` characters, and
    the evidence each number stands for (line n is ``sent[n - 1]``)."""
    lines: list[str] = []
    sent: list[MemoryEvidence] = []
    room = budget
    for row in sorted(evidence, key=lambda e: (e.ts, e.id)):
        if row.sensitivity == screening.HIGH:
            continue
        content = row.content if len(row.content) <= LINE_CHARS else row.content[:LINE_CHARS] + " […]"
        line = f"[{len(sent) + 1}] {row.role}: {content}"
        if screening.is_high(line) or len(line) + 1 > room:
            continue
        lines.append(line)
        sent.append(row)
        room -= len(line) + 1
    return "\n".join(lines), sent


def known(s: Session, loom_id: UUID, lines: str, now: datetime) -> dict[str, MemoryThread]:
    """What the loom already holds on the lines' matter, by label: its live facts and procedures
    the lines' words find (BM25, the loom its corpus), none pinned (a pin is the person's choice)
    nor reading as high (never sent)."""
    found = memory.by_lexical(s, loom_id, lines[:KNOWN_QUERY_CHARS], KNOWN * 2, now)
    threads = [
        f.thread
        for f in found
        if f.thread.kind in ("Semantic", "Procedural")
        and not f.thread.pinned
        and not screening.is_high(f.thread.content)
    ]
    return {f"m{n}": thread for n, thread in enumerate(threads[:KNOWN], 1)}


def known_section(labelled: dict[str, MemoryThread]) -> str:
    """The prompt's list of what is already remembered ('' when nothing is)."""
    if not labelled:
        return ""
    lines = (f"[{label}] {thread.content}" for label, thread in labelled.items())
    return "\n\nAlready remembered:\n" + "\n".join(lines)


def replaced(facts: Facts, labelled: dict[str, MemoryThread]) -> list[MemoryThread]:
    """The known threads the facts name as made untrue (a fact dropped as high replaces nothing)."""
    out: dict[UUID, MemoryThread] = {}
    for fact in facts.facts:
        if " ".join(fact.content.split()) and not screening.is_high(fact.content):
            out.update({labelled[label].id: labelled[label] for label in fact.replaces if label in labelled})
    return list(out.values())


def memories(loom_id: UUID, facts: Facts, sent: list[MemoryEvidence], agent: str, run_id: str | None):
    """The facts as memory threads to write: each screened (one that reads as high is dropped),
    with the evidence its line numbers cite."""
    out = []
    for fact in facts.facts:
        content = " ".join(fact.content.split())
        if not content or screening.is_high(content):
            continue
        cited = [stored(sent[n - 1].id) for n in dict.fromkeys(fact.lines) if 1 <= n <= len(sent)]
        out.append(
            memory.NewMemory(
                content=content,
                kind=fact.kind,
                weight=0.5,
                basis="Extracted",
                subjects=[subject[:200] for subject in fact.subjects if subject.strip()][:32],
                cues=[" ".join(cue.split())[:CUE_CHARS] for cue in fact.cues if cue.strip()][:CUES],
                agent=agent,
                run_id=run_id,
                evidence_ids=cited,
                source_key=keys.digest(str(loom_id), content.casefold())[:32],
            )
        )
    return out


def load(s: Session, ids: list[int]) -> list[MemoryEvidence]:
    return list(s.exec(select(MemoryEvidence).where(col(MemoryEvidence.id).in_(ids))))


def proposal(new: memory.NewMemory) -> dict:
    """A fact as the seed's ProposedThread, for a loom that weaves in Suggest mode."""
    return {
        "content": new.content,
        "kind": new.kind,
        "weight": new.weight,
        "subjects": list(new.subjects),
        "tags": list(new.tags),
        "cues": list(new.cues),
        "until": new.until.isoformat() if new.until else None,
        "basis": new.basis,
    }


def recalled(
    s: Session,
    loom_id: UUID,
    query: str,
    since: datetime | None,
    until: datetime | None,
    thread_id: str | None,
    limit: int,
) -> list[lexical.Scored]:
    """The loom's evidence by BM25 over ``query`` (the loom its corpus), best first: of what was
    said from ``since`` to ``until`` and in ``thread_id``, those named."""
    window = search_queries.IN_LOOM
    params: dict[str, object] = {"loom": loom_id}
    for bound, value, condition in (
        ("since", since, search_queries.SAID_SINCE),
        ("until", until, search_queries.SAID_UNTIL),
        ("thread", thread_id, search_queries.IN_THREAD),
    ):
        if value is not None:
            window += condition
            params[bound] = value
    lexemes = list(dict.fromkeys(lexical.query_lexemes(s, query)))
    return lexical.search(
        s, lexemes, window, params, limit, search_queries.IN_LOOM, search_queries.MEMORY_EVIDENCE
    )


@dataclass(frozen=True)
class Window:
    """Which evidence memory.recall reads: said from ``since`` to ``until``, in ``thread_id``, those
    given."""

    since: datetime | None
    until: datetime | None
    thread_id: str | None


def recall(
    s: Session, loom_id: UUID, query: str | None, window: Window, limit: int
) -> list[tuple[MemoryEvidence, float | None]]:
    """The loom's evidence in the window with its BM25 score, best first, with a ``query``; in
    time order without one (no score). Never a message that reads as high."""
    if query:
        scored = recalled(s, loom_id, query, window.since, window.until, window.thread_id, limit)
        rows = {e.id: e for e in load(s, [x.id for x in scored])}
        return [(rows[x.id], x.score) for x in scored]
    chosen = select(MemoryEvidence).where(
        col(MemoryEvidence.loom_id) == loom_id, col(MemoryEvidence.sensitivity) != screening.HIGH
    )
    if window.since is not None:
        chosen = chosen.where(col(MemoryEvidence.ts) >= window.since)
    if window.until is not None:
        chosen = chosen.where(col(MemoryEvidence.ts) <= window.until)
    if window.thread_id is not None:
        chosen = chosen.where(col(MemoryEvidence.thread_id) == window.thread_id)
    ordered = chosen.order_by(col(MemoryEvidence.ts), col(MemoryEvidence.id)).limit(limit)
    return [(e, None) for e in s.exec(ordered)]
