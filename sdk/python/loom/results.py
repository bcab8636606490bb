"""Typed results of the SDK's search, memory, context and working-memory calls: dataclasses made
from the ops' answers (``from_answer``), each keeping the whole answer in ``raw`` for a field this
version does not name yet."""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


def _moment(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


@dataclass(frozen=True)
class Hit:
    """A turn ``bot.search`` found: where it was said, by whom, how it ranked, and an excerpt."""

    namespace: str
    thread_id: str
    msg_id: str
    role: str
    ts: datetime
    excerpt: str
    score: float | None
    found_by: list[str]
    raw: dict = field(repr=False)

    @classmethod
    def from_answer(cls, hit: dict) -> "Hit":
        return cls(
            hit["namespace"],
            hit["thread_id"],
            hit["msg_id"],
            hit["role"],
            _moment(hit["ts"]),
            hit["excerpt"],
            hit.get("score") if hit.get("score") is not None else hit.get("similarity"),
            list(hit.get("found_by", [])),
            hit,
        )


@dataclass(frozen=True)
class SearchResult:
    """``bot.search``: the mode that answered (hybrid, vector, lexical or substring) and the hits."""

    mode: str
    hits: list[Hit]
    raw: dict = field(repr=False)

    @classmethod
    def from_answer(cls, answer: dict) -> "SearchResult":
        return cls(answer["mode"], [Hit.from_answer(hit) for hit in answer["hits"]], answer)


@dataclass(frozen=True)
class Memory:
    """A memory thread: a fact (Semantic), an episode (Episodic) or a how-to (Procedural)."""

    id: str
    content: str
    kind: str
    weight: float
    subjects: list[str]
    tags: list[str]
    basis: str
    pinned: bool
    created_at: datetime
    updated_at: datetime
    score: float | None  # a search's fused score; None outside a search
    raw: dict = field(repr=False)

    @classmethod
    def from_answer(cls, thread: dict) -> "Memory":
        return cls(
            thread["id"],
            thread["content"],
            thread["kind"],
            thread["weight"],
            list(thread["subjects"]),
            list(thread["tags"]),
            thread["basis"],
            thread["pinned"],
            _moment(thread["dateCreated"]),
            _moment(thread["dateUpdated"]),
            thread.get("score"),
            thread,
        )


@dataclass(frozen=True)
class Remembered:
    """``bot.memory.set``: whether it was stored (not when it reads as a secret) and the memory."""

    stored: bool
    reason: str | None
    memory: Memory | None
    raw: dict = field(repr=False)

    @classmethod
    def from_answer(cls, answer: dict) -> "Remembered":
        thread = answer.get("thread")
        return cls(
            answer["stored"], answer.get("reason"), Memory.from_answer(thread) if thread else None, answer
        )


@dataclass(frozen=True)
class Reflection:
    """``bot.memory.reflect``: the answer (``by`` the model, or the threads themselves when there
    is none: ``reason`` says why), the ids it cites and shows, the memories, and the knots (what
    ties them) and tensions (where they disagree, and which is newer) as the op answers them."""

    answer: str
    by: str
    reason: str | None
    cited: list[str]
    seen: list[str]
    memories: list[Memory]
    knots: list[dict]
    tensions: list[dict]
    raw: dict = field(repr=False)

    @classmethod
    def from_answer(cls, answer: dict) -> "Reflection":
        return cls(
            answer["answer"],
            answer["by"],
            answer.get("reason"),
            list(answer["cited"]),
            list(answer["seen"]),
            [Memory.from_answer(t) for t in answer["threads"]],
            list(answer["knots"]),
            list(answer["tensions"]),
            answer,
        )


@dataclass(frozen=True)
class Recalled:
    """A message extraction read, as ``bot.memory.recall`` finds it again."""

    thread_id: str
    msg_id: str
    role: str
    ts: datetime
    excerpt: str
    score: float | None
    raw: dict = field(repr=False)

    @classmethod
    def from_answer(cls, hit: dict) -> "Recalled":
        return cls(
            hit["thread_id"],
            hit["msg_id"],
            hit["role"],
            _moment(hit["ts"]),
            hit["excerpt"],
            hit["score"],
            hit,
        )


@dataclass(frozen=True)
class WorkingMemory:
    """The "where was I" block of a user, project and branch. ``withheld``: it read as a secret,
    so its content is blank."""

    content: str
    revision: int
    withheld: bool
    project: str
    branch: str
    user_id: str
    updated_at: datetime
    changed: bool | None  # a write's: false when the block already held this content
    raw: dict = field(repr=False)

    @classmethod
    def from_answer(cls, block: dict) -> "WorkingMemory":
        return cls(
            block["content"],
            block["revision"],
            block["withheld"],
            block["project"],
            block["branch"],
            block["user_id"],
            _moment(block["updated_at"]),
            block.get("changed"),
            block,
        )


@dataclass(frozen=True)
class Pack:
    """``bot.context.pack``: the memories chosen for the conversation (the tapestry, as text),
    those another agent gave, proposals to weave, and the scope's working memory."""

    tapestry: str | None
    session: dict
    gifts: list[Memory]
    proposals: list[dict]
    working_memory: WorkingMemory | None
    raw: dict = field(repr=False)

    @classmethod
    def from_answer(cls, answer: dict) -> "Pack":
        block: Any = answer.get("working_memory")
        return cls(
            answer["tapestry"],
            answer["session"],
            [Memory.from_answer(gift) for gift in answer["gifts"]],
            list(answer["proposals"]),
            WorkingMemory.from_answer(block) if block else None,
            answer,
        )
