"""Weaving a session's tapestry: what the agent wakes up knowing ("What You Know"), woven once on
its first turn from the loom's live memory threads, then fixed for the session.

Threads are ranked: pinned first, then those about more of the session's subjects (a subject
named in the thread's ``subjects`` or, as whole words, in its text), then facts and procedures
before episodes, then the heavier, then the newer. They are taken in that order while they fit
the budget of tokens (``pipelines.token_budget``), a thread that does not fit passed over for a
shorter one, with at most ``MAX_EPISODES`` episodes not pinned, never two episodes that say the
same thing (``gist``), and never a thread that reads as high now (one that did when written was
never stored; the screen's rules may have grown since). Each line names its thread's id, so the
agent can pin or cite it."""

import re
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from models.memory import Loom, LoomSession, MemoryThread
from pipelines import memory, screening, sessions, token_budget

HEADING = "What You Know"
EPISODIC = "Episodic"
# Episodes tell what happened; a tapestry is mostly what holds. A few recent ones say where work
# stands without crowding out the facts.
MAX_EPISODES = 3
# Of the threads about none of the session's subjects, the most a tapestry reads: more than the
# largest budget (8,000 tokens) holds lines.
REST = 1_000


@dataclass(frozen=True)
class Subjects:
    """Whom a session is about: the (user, session) scope's user, whoever sent messages in the
    conversation thread, and the subjects the agent named (a plugin names the project and branch),
    in that order."""

    thread_id: str
    user_id: str | None
    named: list[str]


def relevance(thread: MemoryThread, subjects: list[str]) -> int:
    own = {subject.casefold() for subject in thread.subjects}
    return sum(1 for s in subjects if s.casefold() in own or memory.mentions(thread.content, s))


def gist(text: str) -> tuple[str, ...]:
    """What an episode says, for telling two apart: its words, casefolded and stripped of
    punctuation, without the words that name one occasion rather than what happened (a word with
    a digit: numbers, ids, times; the word after "session": the session's name). Two episodes of
    the same gist say the same thing."""
    words = text.casefold().split()
    kept = [
        word
        for before, word in zip(["", *words], words, strict=False)
        if not re.search(r"\d", word) and before.strip("`'\"(),.;:") != "session"
    ]
    return tuple(filter(None, (re.sub(r"[\W_]+", "", word) for word in kept)))


def line(thread: MemoryThread) -> str:
    """The thread as a line of context: its text, then its id (what memory.pin takes)."""
    return f"- {thread.content} [{thread.id}]"


def rank(threads: list[MemoryThread], subjects: list[str]) -> list[MemoryThread]:
    return sorted(
        threads,
        key=lambda t: (
            not t.pinned,
            -relevance(t, subjects),
            t.kind == EPISODIC,
            -t.weight,
            -t.created_at.timestamp(),
        ),
    )


def choose(threads: list[MemoryThread], subjects: list[str], max_tokens: int) -> list[MemoryThread]:
    budget = token_budget.Budget(max_tokens)
    budget.take(HEADING)
    chosen: list[MemoryThread] = []
    told: set[tuple[str, ...]] = set()  # the gists of the episodes taken
    episodes = 0
    for thread in rank(threads, subjects):
        episode = thread.kind == EPISODIC
        if episode and (gist(thread.content) in told or (episodes >= MAX_EPISODES and not thread.pinned)):
            continue
        if screening.is_high(thread.content):
            continue
        # Each line is counted with its newline: the text the agent gets is what was counted.
        if budget.take("\n" + line(thread)):
            chosen.append(thread)
            if episode:
                told.add(gist(thread.content))
                episodes += not thread.pinned
    return chosen


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
    woven = choose(memory.tapestry_candidates(s, loom.id, subjects, REST, now), subjects, max_tokens)
    session.tapestry = render(woven)
    session.tapestry_woven_at = now
    session.subjects = subjects
    sessions.record(s, session, {"tapestry_thread_ids": [t.id for t in woven]}, now)
