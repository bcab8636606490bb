"""memory.suggest's choice: given what was just said, the memory threads it touches.

Candidates come two ways: the loom's hybrid search over the words said, and cues (a thread's cue
said as a whole word brings it back, once a session). Each candidate is then vetted against what
was said: it passes when its vector is at least ``floor`` similar to the words' (when the thread
has no vector yet, when the lexical leg found it). A candidate that fails is held back: the agent
never sees it, and it may come up again. A thread already offered in the session is not offered
again."""

import re
from dataclasses import dataclass
from uuid import UUID

from models.memory import MemoryThread


def cue_said(cue: str, said: str) -> bool:
    """The cue appears in what was said as whole words, whatever the case."""
    return re.search(rf"(?<!\w){re.escape(cue.strip())}(?!\w)", said, re.IGNORECASE) is not None


@dataclass(frozen=True)
class Candidate:
    thread: MemoryThread
    similarity: float | None  # to what was said; None without vectors
    lexical: bool  # the lexical leg found it
    cued: bool  # a cue of it was said (and it was not cued before in the session)


@dataclass(frozen=True)
class Choice:
    offered: list[Candidate]
    held_back: list[Candidate]


def vet(candidates: list[Candidate], floor: float, already: set[UUID], limit: int) -> Choice:
    """Split the candidates (best first) into those offered, at most ``limit``, and those held
    back; a thread offered before in the session is neither."""
    offered: list[Candidate] = []
    held_back: list[Candidate] = []
    for candidate in candidates:
        if candidate.thread.id in already:
            continue
        close = candidate.similarity >= floor if candidate.similarity is not None else candidate.lexical
        if not close:
            held_back.append(candidate)
        elif len(offered) < limit:
            offered.append(candidate)
    return Choice(offered, held_back)
