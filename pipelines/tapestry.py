"""Weaving a session's tapestry: what the agent wakes up knowing ("What You Know"), woven once on
its first turn from the loom's live memory threads, then fixed for the session.

Threads are taken in this order while they fit the budget of tokens (``pipelines.token_budget``):
pinned first, then those about more of the session's subjects (a subject named in the thread's
``subjects`` or its text), then the heavier, then the newer. A thread that does not fit is passed
over for a shorter one. Each line names its thread's id, so the agent can pin or cite it."""

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from models.memory import Loom, LoomSession, MemoryThread
from pipelines import memory, sessions, token_budget

HEADING = "What You Know"


@dataclass(frozen=True)
class Subjects:
    """Whom a session is about: the (user, session) scope's user, whoever sent messages in the
    conversation thread, and the subjects the agent named, in that order."""

    thread_id: str
    user_id: str | None
    named: list[str]


def relevance(thread: MemoryThread, subjects: list[str]) -> int:
    own = {subject.casefold() for subject in thread.subjects}
    text = thread.content.casefold()
    return sum(1 for subject in subjects if subject.casefold() in own or subject.casefold() in text)


def line(thread: MemoryThread) -> str:
    """The thread as a line of context: its text, then its id (what memory.pin takes)."""
    return f"- {thread.content} [{thread.id}]"


def choose(threads: list[MemoryThread], subjects: list[str], max_tokens: int) -> list[MemoryThread]:
    ranked = sorted(
        threads,
        key=lambda t: (not t.pinned, -relevance(t, subjects), -t.weight, -t.created_at.timestamp()),
    )
    budget = token_budget.Budget(max_tokens)
    budget.take(HEADING)
    # Each line is counted with its newline: the text the agent gets is what was counted.
    return [thread for thread in ranked if budget.take("\n" + line(thread))]


def render(threads: list[MemoryThread]) -> str | None:
    """The tapestry's text; None when there is nothing to know."""
    if not threads:
        return None
    return "\n".join([HEADING, *(line(thread) for thread in threads)])


def weave(
    s: Session, loom: Loom, session: LoomSession, about: Subjects, max_tokens: int, now: datetime
) -> None:
    """Weave the session's tapestry, once: on its first context.pack, within ``max_tokens``."""
    if session.tapestry_woven_at is not None:
        return
    senders = sessions.senders(s, loom.namespace, about.thread_id)
    subjects = list(dict.fromkeys([*([about.user_id] if about.user_id else []), *senders, *about.named]))
    woven = choose(memory.live_threads(s, loom.id, now), subjects, max_tokens)
    session.tapestry = render(woven)
    session.tapestry_woven_at = now
    session.subjects = subjects
    sessions.record(s, session, {"tapestry_thread_ids": [t.id for t in woven]}, now)
