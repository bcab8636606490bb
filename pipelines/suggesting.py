"""memory.suggest's choice: given what was just said, the memory threads it touches.

Candidates come two ways: the loom's hybrid search over the words said, and cues (a thread's cue
said as a whole word brings it back, once a session). Each candidate is then vetted against what
was said: it passes when its vector is at least ``floor`` similar to the words' (when the thread
has no vector yet, when the lexical leg found it). A candidate that fails is held back: the agent
never sees it, and it may come up again. A thread already offered in the session is not offered
again."""

import re
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from sqlmodel import Session

from models.memory import Loom, LoomSession, MemoryThread
from pipelines import hybrid, memory, sessions


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


@dataclass(frozen=True)
class Said:
    """What was just said, and its vector (embedded before the transaction: the model may be
    slow); no vector when the embedder failed."""

    text: str
    vector: list[float] | None
    model: str | None

    @classmethod
    def embedded(cls, text: str) -> "Said":
        vector, model, _ = hybrid.embedded_query(text)
        return cls(text, vector, model)


def suggest(
    s: Session, loom: Loom, where: sessions.Where, said: Said, limit: int, floor: float, now: datetime
) -> tuple[LoomSession, Choice]:
    """The session's threads that what was just ``said`` touches, vetted against ``floor`` and
    recorded in it: offered ones as suggested (those a cue brought also as cued), the rest as held
    back."""
    vector, model = said.vector, said.model
    pool = max(4 * limit, 20)
    session = sessions.open_session(s, loom, where, now)
    # Every candidate of both legs, fused with no floor: vetting (below) judges their similarity.
    corpus = memory.corpus(s, loom.id, now)
    semantic = corpus.by_vector(vector, model, pool, -1.0) if vector is not None and model else []
    found = corpus.by_lexical(said.text, pool)
    ranked = hybrid.fuse(semantic, found, hybrid.LEXICAL_WEIGHT, pool, key=corpus.key)
    cued_before = set(session.cued_thread_ids)
    cued = [
        t
        for t in memory.cued_threads(s, loom.id, now)
        if t.id not in cued_before and any(cue_said(c, said.text) for c in t.cues)
    ]
    threads = {t.id: t for t in cued} | {hit.thread.id: hit.thread for hit in ranked}
    similar = {}
    if vector is not None and model and threads:
        similar = memory.similarities(s, list(threads), vector, model)
    lexical = {hit.thread.id for hit in found}
    cued_ids = {t.id for t in cued}
    order = [*cued_ids, *(i for i in threads if i not in cued_ids)]
    candidates = [Candidate(threads[i], similar.get(i), i in lexical, i in cued_ids) for i in order]
    choice = vet(candidates, floor, set(session.suggested_thread_ids), limit)
    offered = {
        "suggested_thread_ids": [c.thread.id for c in choice.offered],
        "cued_thread_ids": [c.thread.id for c in choice.offered if c.cued],
        "held_back_thread_ids": [c.thread.id for c in choice.held_back],
    }
    sessions.record(s, session, offered, now)
    return session, choice
