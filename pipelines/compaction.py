"""Compaction's work: choose the window of an agent's transcript to summarise, build the prompt,
and write the summary in place of the window. Plain functions; the stage in
``workers/stages/compaction.py`` adds claiming, the model calls and retries.

The window is the oldest live turns before the last ``keep_recent`` that fit the summariser's
prompt. Summaries at its start (earlier compactions) fold into the prompt from an allowance of
their own; one that does not fit what is left of it stays live, and one a failed run left (the
turns it names are all still live, in the window) is replaced unread. A summary further in takes
budget like any turn and is replaced with it. A turn that reads as high is never sent, and a turn a
user saved is never summarised: both stay live and verbatim, so the summary, placed at the
window's first turn, can come before them. Earlier summaries
count toward neither ``min_to_compact`` nor ``messages_summarized``."""

from dataclasses import dataclass, field
from datetime import datetime

from pydantic import BaseModel, Field
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select

from models.base import stored
from models.conversation import Embedding, Thread, Turn, TurnKey
from models.memory import MemoryThread
from models.queries import threads as queries
from pipelines import contexts, keys, retire, screening, tapestry, token_budget

NOTHING_TO_COMPACT = "nothing-to-compact"
SUMMARY_HIGH = "summary-high-sensitivity"
EMBED_FAILED = "embed-failed"
PROMPT_HIGH = "prompt-high-sensitivity"
COMPACTED_FROM = "compacted_from"

INSTRUCTIONS = (
    "You condense the earlier part of a conversation so that an agent can carry it on without "
    "the original turns. Keep every decision, fact, name, number, file, command and open question; "
    "drop pleasantries. Write plain prose in the third person, at most a few paragraphs. Where "
    "earlier summaries are given, fold them in: the result replaces them too."
)
SUMMARY_MAX_CHARS = 8_000
# The section a summary ends with when the agent's sessions on the conversation hold threads.
HELD_HEADING = "Held (pinned in this session; ids for memory.pin):"


class Summary(BaseModel):
    summary: str = Field(min_length=1, description="the condensed conversation")


def is_summary(turn: Turn) -> bool:
    return turn.role == "system" and COMPACTED_FROM in (turn.meta or {})


@dataclass
class Window:
    folded: list[Turn] = field(default_factory=list)  # leading summaries sent from their allowance
    stale: list[Turn] = field(default_factory=list)  # leading summaries a failed run left: dropped
    turns: list[Turn] = field(default_factory=list)  # what the summary replaces, in order

    @property
    def new_turns(self) -> list[Turn]:
        return [turn for turn in self.turns if not is_summary(turn)]

    @property
    def replaced(self) -> list[Turn]:
        return self.folded + self.stale + self.turns

    @property
    def first(self) -> Turn:
        return min(self.replaced, key=lambda turn: (turn.ts, turn.id))


def line(turn: Turn, cap: int) -> str:
    content = turn.content if len(turn.content) <= cap else turn.content[:cap] + " […]"
    return f"{turn.role}: {content}"


def sendable(text: str) -> bool:
    """What the prompt would carry of a turn, screened as sent: a turn stored as high never
    qualifies, and neither does one whose cut text reads as high (a cut can make a shape)."""
    return not screening.is_high(text)


def kept_verbatim(turn: Turn, saved: frozenset[str]) -> bool:
    """A turn that reads as high (never sent to the summariser) or whose message a user saved
    (``saved``: the msg_ids of which any agent's live copy is saved) stays live and verbatim: no
    window takes it. Any copy counts, since a save flags the copies logged by then and an agent
    may log its copy after the save."""
    return turn.sensitivity == "high" or turn.is_saved or turn.msg_id in saved


def choose(
    turns: list[Turn], saved: frozenset[str], keep_recent: int, min_to_compact: int, budget: int
) -> Window | None:
    """The window of ``turns`` (an agent's live turns in reading order), or None when it holds
    fewer than ``min_to_compact`` new turns. ``budget`` is the prompt's room in characters; a
    quarter of it is the allowance of leading summaries, and one turn takes at most a quarter.
    A turn kept verbatim (``kept_verbatim``), or whose line would read as high as sent, is never
    in the window: it stays live."""
    cap = budget // 4
    older = [turn for turn in turns[: max(len(turns) - keep_recent, 0)] if not kept_verbatim(turn, saved)]
    window = Window()
    live = {turn.msg_id for turn in older}
    for turn in older:  # a summary whose turns are all still live: its run failed before the end
        named = set(turn.meta.get(COMPACTED_FROM) or []) if is_summary(turn) else set()
        if named and named <= live:
            window.stale.append(turn)
    older = [turn for turn in older if turn not in window.stale]
    i, allowance = 0, budget // 4
    while i < len(older) and is_summary(older[i]):
        if len(older[i].content) <= allowance and sendable(older[i].content):
            window.folded.append(older[i])
            allowance -= len(older[i].content)
        i += 1
    room = budget - budget // 4
    for turn in older[i:]:
        sent = line(turn, cap)
        if not sendable(sent):
            continue
        if len(sent) + 1 > room:
            break
        window.turns.append(turn)
        room -= len(sent) + 1
    if len(window.new_turns) < max(min_to_compact, 1):
        return None
    return window


def with_held(summary: str, held: list[MemoryThread], max_tokens: int) -> str:
    """The summary, then the held threads as the tapestry names them (those that fit
    ``max_tokens``, none that reads as high): a summarised conversation keeps what its agent
    pinned, where its next turns (and a search) read it."""
    budget = token_budget.Budget(max_tokens)
    lines = [
        tapestry.line(thread)
        for thread in held
        if not screening.is_high(thread.content) and budget.take(tapestry.line(thread) + "\n")
    ]
    return "\n\n".join([summary, "\n".join([HELD_HEADING, *lines])]) if lines else summary


def without_held(summary: str) -> str:
    """A summary without its held section: the model folds the prose; the section is written
    anew from what is held then."""
    return summary.split("\n\n" + HELD_HEADING, 1)[0]


def prompt(window: Window, budget: int) -> str:
    parts = []
    if window.folded:
        folded = (without_held(turn.content) for turn in window.folded)
        parts.append("Earlier summaries:\n" + "\n\n".join(folded))
    parts.append("Turns:\n" + "\n".join(line(turn, budget // 4) for turn in window.turns))
    return "\n\n".join(parts)


def load(s: Session, thread_row_id: int, agent: str) -> tuple[Thread | None, list[Turn], frozenset[str]]:
    """The live thread, the agent's live turns in reading order and the thread's saved messages."""
    thread = s.get(Thread, thread_row_id)
    if thread is None or thread.deleted_at is not None:
        return None, [], frozenset()
    turns = s.exec(
        select(Turn)
        .where(
            col(Turn.namespace) == thread.namespace,
            col(Turn.thread_id) == thread.thread_id,
            col(Turn.agent) == agent,
            col(Turn.deleted_at).is_(None),
        )
        .order_by(col(Turn.ts), col(Turn.id))
    ).all()
    return thread, list(turns), saved_messages(s, thread)


def saved_messages(s: Session, thread: Thread, among: list[str] | None = None) -> frozenset[str]:
    """The msg_ids (of ``among``, or all) of which any agent holds a live saved copy."""
    query = select(col(Turn.msg_id)).where(
        col(Turn.namespace) == thread.namespace,
        col(Turn.thread_id) == thread.thread_id,
        col(Turn.is_saved).is_(True),
        col(Turn.deleted_at).is_(None),
    )
    if among is not None:
        query = query.where(col(Turn.msg_id).in_(among))
    return frozenset(s.exec(query).all())


def summary_msg_id(window: Window, agent: str) -> str:
    return "summary-" + keys.digest(agent, *(turn.msg_id for turn in window.replaced))[:24]


@dataclass(frozen=True)
class Embedded:
    text: str  # the summary's first characters, as the embedder took them
    vector: list[float]
    model: str


def apply(
    s: Session,
    thread_row_id: int,
    agent: str,
    window: Window,
    summary: str,
    embedded: Embedded,
    now: datetime,
) -> tuple[int, dict] | None:
    """Write the summary in place of the window, in the caller's transaction: the summary turn
    (stamped with the window's first turn's time), its embedding row with its vector, and the
    window's turns tombstoned with their embedding rows settled and the thread's contexts
    rebuilt. Returns the embedding row's id and what was done; None, writing nothing, when the
    thread or any turn of the window changed since it was chosen (deleted, compacted)."""
    thread = s.exec(select(Thread).where(col(Thread.id) == thread_row_id).with_for_update()).first()
    if thread is None or thread.deleted_at is not None:
        return None
    ids = [stored(turn.id) for turn in window.replaced]
    still_live = s.exec(
        select(col(Turn.id)).where(col(Turn.id).in_(ids), col(Turn.deleted_at).is_(None))
    ).all()
    if len(still_live) != len(ids):
        return None
    # A message saved since the window was chosen stays out of it: the window is chosen again.
    if saved_messages(s, thread, [turn.msg_id for turn in window.replaced]):
        return None
    first = window.first
    msg_id = summary_msg_id(window, agent)
    summarised = [turn.msg_id for turn in window.new_turns]
    turn_id = s.scalar(
        insert(Turn)
        .values(
            namespace=thread.namespace,
            thread_id=thread.thread_id,
            agent=agent,
            msg_id=msg_id,
            role="system",
            content=summary,
            meta={COMPACTED_FROM: [turn.msg_id for turn in window.turns + window.folded]},
            sensitivity="none",  # the stage screened the summary before this write
            screened_with=screening.RULES_VERSION,
            ts=first.ts,
        )
        .returning(col(Turn.id))
    )
    assert turn_id is not None  # RETURNING the row just inserted
    s.add(
        TurnKey(
            namespace=thread.namespace,
            thread_id=thread.thread_id,
            agent=agent,
            msg_id=msg_id,
            turn_id=turn_id,
            ts=first.ts,
        )
    )  # the copy's key, unique as every turn's is
    embedding_id = s.scalar(
        insert(Embedding)
        .values(
            turn_id=turn_id,
            namespace=thread.namespace,
            thread_id=thread.thread_id,
            agent=agent,
            msg_id=msg_id,
            role="system",
            text=embedded.text,
            digest=keys.digest(embedded.text),
            model=embedded.model,
            vector=embedded.vector,
            created_at=now,
            embedded_at=now,
        )
        .returning(col(Embedding.id))
    )
    assert embedding_id is not None  # RETURNING the row just inserted
    retire.retire(s, thread.namespace, thread.thread_id, ids, now)
    contexts.rebuild(s, [(thread.namespace, thread.thread_id)])  # no context holds a retired turn's words
    s.execute(queries.SHRINK_TURN_COUNT, {"gone": len(ids) - 1, "id": thread.id})
    return embedding_id, {
        "summary_msg_id": msg_id,
        "messages_summarized": len(summarised),
        "summaries_folded": len(window.folded) + len([t for t in window.turns if is_summary(t)]),
        "summaries_replaced_unread": len(window.stale),
    }


def newest_turn(s: Session, thread_row_id: int, agent: str) -> int | None:
    """The newest live turn of the agent's transcript of the thread (what a request is for)."""
    return s.execute(queries.NEWEST_TURN_OF_AGENT, {"id": thread_row_id, "agent": agent}).scalar()


def grown(s: Session, past_turns: int, limit: int) -> list[tuple[int, str]]:
    """(thread row, agent) of recording namespaces whose live transcript has grown past
    ``past_turns`` turns and was not asked to compact since its last turn, at most ``limit``,
    largest first: the auto-compaction pass's pick."""
    rows = s.execute(queries.GROWN_TRANSCRIPTS, {"past": past_turns, "limit": limit}).all()
    return [(row[0], row[1]) for row in rows]
