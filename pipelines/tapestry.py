"""Weaving a session's tapestry: what the agent wakes up knowing ("What You Know"), woven once on
its first turn from the loom's live memory threads, then fixed for the session.

Threads are taken in this order while they fit the character budget: pinned first, then those
about more of the session's subjects (a subject named in the thread's ``subjects`` or its text),
then the heavier, then the newer. A thread that does not fit is passed over for a shorter one."""

from models.memory import MemoryThread

HEADING = "What You Know"


def relevance(thread: MemoryThread, subjects: list[str]) -> int:
    own = {subject.casefold() for subject in thread.subjects}
    text = thread.content.casefold()
    return sum(1 for subject in subjects if subject.casefold() in own or subject.casefold() in text)


def choose(threads: list[MemoryThread], subjects: list[str], budget: int) -> list[MemoryThread]:
    ranked = sorted(
        threads,
        key=lambda t: (not t.pinned, -relevance(t, subjects), -t.weight, -t.created_at.timestamp()),
    )
    chosen, room = [], budget - len(HEADING) - 1
    for thread in ranked:
        line = len(thread.content) + 3  # "- " and the newline
        if line <= room:
            chosen.append(thread)
            room -= line
    return chosen


def render(threads: list[MemoryThread]) -> str | None:
    """The tapestry's text; None when there is nothing to know."""
    if not threads:
        return None
    return "\n".join([HEADING, *(f"- {thread.content}" for thread in threads)])
