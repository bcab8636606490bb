"""memory.suggest's choice: given what was just said, the memory threads it touches.

Candidates come two ways: the loom's hybrid search over the words said, and cues (a thread's cue
said as a whole word brings it back, once a session). Each candidate is then vetted against what
was said: it passes when its vector is at least ``floor`` similar to the words' (when the thread
has no vector yet, when the lexical leg found it). A candidate that fails is held back: the agent
never sees it, and it may come up again. A thread already offered in the session, or woven into
its tapestry, is not offered again. What is offered fits a budget of tokens, each suggestion
counted as the line an agent is shown (``line``: the thread's tapestry line and its receipt, the
one line that says why it was offered); one that does not fit is passed over, and may come up
again."""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from sqlmodel import Session

from models.memory import Loom, LoomSession, MemoryThread
from pipelines import hybrid, memory, sessions, tapestry, token_budget


def cue_of(thread: MemoryThread, said: str) -> str | None:
    """The first of the thread's cues that was said (as whole words, whatever the case), if any."""
    return next((cue for cue in thread.cues if memory.mentions(said, cue)), None)


@dataclass(frozen=True)
class Candidate:
    thread: MemoryThread
    similarity: float | None  # to what was said; None without vectors
    lexical: bool  # the lexical leg found it
    cue: str | None  # the cue of it that was said (when it was not cued before in the session)

    @property
    def cued(self) -> bool:
        return self.cue is not None

    @property
    def receipt(self) -> str:
        """Why it is offered, in one line: the cue said, or its similarity and the legs."""
        why = []
        if self.cue is not None:
            why.append(f'cue "{self.cue}" was said')
        if self.similarity is not None:
            why.append(f"similarity {self.similarity:.2f} to what was said")
        if self.lexical:
            why.append("words in common")
        return ", ".join(why)


def line(candidate: Candidate) -> str:
    """The suggestion as an agent is shown it (and as its budget counts it)."""
    return f"{tapestry.line(candidate.thread)} ({candidate.receipt})"


@dataclass(frozen=True)
class Choice:
    offered: list[Candidate]
    held_back: list[Candidate]


@dataclass(frozen=True)
class Bounds:
    """How much one suggest may offer: at most ``limit`` threads within ``max_tokens``."""

    floor: float
    limit: int
    max_tokens: int


def vet(candidates: list[Candidate], bounds: Bounds, already: set[UUID]) -> Choice:
    """Split the candidates (best first) into those offered, at most ``limit`` within the budget,
    and those held back; a thread the session already knows of this way (``already``: offered,
    or in its tapestry) is neither, nor is one that passes but does not fit."""
    offered: list[Candidate] = []
    held_back: list[Candidate] = []
    budget = token_budget.Budget(bounds.max_tokens)
    for candidate in candidates:
        if candidate.thread.id in already:
            continue
        if candidate.similarity is not None:
            close = candidate.similarity >= bounds.floor
        else:
            close = candidate.lexical
        if not close:
            held_back.append(candidate)
        elif len(offered) < bounds.limit and budget.take(line(candidate) + "\n"):
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
    s: Session, loom: Loom, where: sessions.Where, said: Said, bounds: Bounds, now: datetime
) -> tuple[LoomSession, Choice]:
    """The session's threads that what was just ``said`` touches, vetted within ``bounds`` and
    recorded in it: offered ones as suggested (those a cue brought also as cued), the rest as held
    back."""
    vector, model = said.vector, said.model
    pool = max(4 * bounds.limit, 20)
    session = sessions.open_session(s, loom, where, now)
    # Every candidate of both legs, fused with no floor: vetting (below) judges their similarity.
    corpus = memory.corpus(s, loom.id, now)
    semantic = corpus.by_vector(vector, model, pool, -1.0) if vector is not None and model else []
    found = corpus.by_lexical(said.text, pool)
    ranked = hybrid.fuse(semantic, found, hybrid.LEXICAL_WEIGHT, pool, key=corpus.key)
    cued_before = set(session.cued_thread_ids)
    cues = {
        t.id: (t, cue)
        for t in memory.cued_threads(s, loom.id, now)
        if t.id not in cued_before and (cue := cue_of(t, said.text)) is not None
    }
    threads = {i: t for i, (t, _) in cues.items()} | {hit.thread.id: hit.thread for hit in ranked}
    similar = {}
    if vector is not None and model and threads:
        similar = memory.similarities(s, list(threads), vector, model)
    lexical = {hit.thread.id for hit in found}
    order = [*cues, *(i for i in threads if i not in cues)]
    candidates = [
        Candidate(threads[i], similar.get(i), i in lexical, cues[i][1] if i in cues else None) for i in order
    ]
    already = {*session.suggested_thread_ids, *session.tapestry_thread_ids}
    choice = vet(candidates, bounds, already)
    offered = {
        "suggested_thread_ids": [c.thread.id for c in choice.offered],
        "cued_thread_ids": [c.thread.id for c in choice.offered if c.cued],
        "held_back_thread_ids": [c.thread.id for c in choice.held_back],
    }
    sessions.record(s, session, offered, now)
    return session, choice
