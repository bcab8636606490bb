"""Judging stored turns again with the rules of this build (``pipelines.screening``), for the turns
an older version of the rules judged (``turns.screened_with``). Plain functions; the re-screening
stage (``workers/stages/screening.py``) adds the run and the embedding runs, the rescreen pass
(``schedules/screening.py``) the ranges.

A turn that now reads as high loses its embedding row in the judging transaction (the vector is
deleted, never kept); one that no longer reads as high gets an embedding row, unless a live row of
the thread already holds the same message and text (it serves this turn too). Either way its
thread's lexical contexts are rebuilt in that transaction (``pipelines.contexts``): a turn now
high is no one's context, one no longer high is again. What was made of a turn now high (a
summary, memory, a title) is withdrawn there too (``pipelines.derived``)."""

import logging
from dataclasses import dataclass, field

from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select, update

from models.conversation import Embedding, Turn
from models.queries import embeddings
from models.queries import turns as queries
from models.settings import get_settings
from pipelines import contexts, derived, embedding, keys, screening

log = logging.getLogger(__name__)


def outdated_ranges(s: Session, span: int, version: int, namespace: str | None, limit: int) -> list[int]:
    """The ranges (``k``: ids k*span .. (k+1)*span-1) holding turns an older rules version judged."""
    params = {"span": span, "version": version, "namespace": namespace, "limit": limit}
    return list(s.execute(queries.OUTDATED_SCREENING_RANGES, params).scalars())


@dataclass
class Judged:
    counts: dict[str, int]
    to_embed: list[tuple[int, str]] = field(default_factory=list)  # new embedding rows: (id, digest)


def judge_again(s: Session, ids: range, version: int, namespace: str | None) -> Judged:
    """Judge the range's older turns again, in the caller's transaction: their threads' rows
    locked first (``contexts.lock``: a turn locked before its thread could deadlock with a delete),
    then theirs."""
    older = [col(Turn.id) >= ids.start, col(Turn.id) < ids.stop, col(Turn.screened_with) < version]
    if namespace is not None:
        older.append(col(Turn.namespace) == namespace)
    contexts.lock(s, s.exec(select(col(Turn.namespace), col(Turn.thread_id)).where(*older).distinct()).all())
    turns = s.exec(select(Turn).where(*older).with_for_update()).all()
    high, cleared = [], []
    for turn in turns:
        level = screening.screen(turn.content).level
        if level == screening.HIGH and turn.sensitivity != screening.HIGH:
            high.append(turn)
        elif level != screening.HIGH and turn.sensitivity == screening.HIGH:
            cleared.append(turn)
    s.exec(update(Turn).where(col(Turn.id).in_([t.id for t in turns])).values(screened_with=version))
    withdrawn = {}
    if high:
        high_ids = [t.id for t in high]
        s.exec(update(Turn).where(col(Turn.id).in_(high_ids)).values(sensitivity=screening.HIGH))
        s.execute(embeddings.DELETE_OF_TURNS, {"ids": high_ids})
        withdrawn = derived.withdraw(s, high)
    to_embed = []
    if cleared:
        cleared_ids = [t.id for t in cleared]
        s.exec(update(Turn).where(col(Turn.id).in_(cleared_ids)).values(sensitivity=screening.NONE))
        to_embed = [
            row
            for turn in cleared
            if turn.deleted_at is None and embedding.embeddable(turn.role, screening.NONE)
            for row in [_embedding_row(s, turn)]
            if row is not None
        ]
    if high or cleared:
        # A turn now high is no one's context any more; one no longer high is again.
        changed = {t.id for t in high} | {t.id for t in cleared}
        contexts.rebuild(s, {(t.namespace, t.thread_id) for t in turns if t.id in changed})
        log.info("re-screened %d turns: %d now high, %d no longer", len(turns), len(high), len(cleared))
    counts = {"turns": len(turns), "high": len(high), "cleared": len(cleared)}
    return Judged(counts | {f"withdrawn_{what}": n for what, n in withdrawn.items()}, to_embed)


def _embedding_row(s: Session, turn: Turn) -> tuple[int, str] | None:
    """A new embedding row for a turn that may now be embedded: (its id, the text's digest)."""
    cut = embedding.embedding_text(turn.content, get_settings().embed_max_chars)
    digest = keys.digest(cut)
    row_id = s.scalar(
        insert(Embedding)
        .values(
            turn_id=turn.id,
            namespace=turn.namespace,
            thread_id=turn.thread_id,
            agent=turn.agent,
            msg_id=turn.msg_id,
            role=turn.role,
            run_id=turn.run_id,
            user_id=turn.user_id,
            text=cut,
            digest=digest,
            created_at=turn.ts,
        )
        .on_conflict_do_nothing(
            index_elements=["namespace", "thread_id", "msg_id", "digest"],
            index_where=col(Embedding.deleted_at).is_(None),
        )
        .returning(col(Embedding.id))
    )
    return None if row_id is None else (row_id, digest)
