"""The re-screening stage: judge again, with the rules of this build, the turns an older version
of the screening rules judged (``turns.screened_with``). Screening stays inline at write time
(nothing reaches a model first); this is how an installation applies better rules to what it
already holds.

A run covers one fixed range of turn ids (``turns:<k>``: ids k*span .. (k+1)*span-1) for one
rules version (and one namespace, or all), so the pass that asks for runs asks for the same ones
until they are done, and a range is one bounded transaction. A turn that now reads as high loses
its embedding row in that transaction (the vector is deleted, never kept), so search stops
serving it; one that no longer reads as high gets its embedding row and run. Safe to run twice
(a judged turn is no longer older) and to kill anywhere (the transaction is all or nothing)."""

import logging

from sqlalchemy import text
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select, update

from models import db
from models.conversation import Embedding, Turn
from models.settings import get_settings
from models.stage_run import PENDING, SKIPPED, SUCCEEDED, StageRun
from pipelines import embedding, keys, screening
from workers import ledger, outbox
from workers.bodies import close, one_at_a_time
from workers.stages import Stage, register
from workers.stages.embedding import EMBEDDING

log = logging.getLogger(__name__)

STAGE = "screening"


def rescreen_turns(run_ids: list[int]) -> None:
    one_at_a_time(SCREENING, run_ids, _work)


SCREENING = register(Stage(STAGE, rescreen_turns, subject_kind="turns", chunk=1))

# The ranges holding turns an older version judged, in id order (ix_turns_screened_with).
OUTDATED_RANGES = text("""
SELECT DISTINCT id / :span AS k FROM turns
WHERE screened_with < :version AND (CAST(:namespace AS text) IS NULL OR namespace = :namespace)
ORDER BY k
LIMIT :limit
""")


def rescreen_outdated(namespace: str | None = None) -> list[int]:
    """The rescreen pass: a run for each range of turns an older rules version judged (of one
    namespace, or all; at most ``LOOM_RESCREEN_MAX_RUNS`` a pass, the next pass asks for the rest).
    A run that succeeded before but whose range holds older turns again (written by a host still
    on the old build during an upgrade), or that an older build's worker skipped, is made pending
    again. Returns the runs sent."""
    settings = get_settings()
    version, span = screening.RULES_VERSION, settings.rescreen_batch
    wanted = {"span": span, "version": version, "namespace": namespace}  # a run's params
    # A namespace's runs are its own (the same range of all namespaces is another run), and so are a
    # span's: a run asked for with another LOOM_RESCREEN_BATCH covers other ids.
    key = f"{version}.{span}" + ("" if namespace is None else f"-{keys.digest(namespace)[:16]}")
    with db.session() as s:
        ranges = s.execute(OUTDATED_RANGES, {**wanted, "limit": settings.rescreen_max_runs}).scalars().all()
        runs = [ledger.wanted_again(s, SCREENING, k, key, wanted) for k in ranges]
    pending = [run.id for run in runs if run.status == PENDING]
    if pending:
        outbox.send(STAGE, pending)
    return pending


def _work(run: StageRun) -> None:
    span, version, namespace = run.params["span"], run.params["version"], run.params.get("namespace")
    if version < screening.RULES_VERSION:
        return close(run, SUCCEEDED, reason="overtaken")  # this build's pass asks for its own runs
    if version > screening.RULES_VERSION:  # during an upgrade: a newer build's pass revives it
        return close(run, SKIPPED, reason="newer-rules")
    k = SCREENING.subject_id(run.subject)
    with db.session() as s:
        counts, runs = _rescreen(s, range(k * span, (k + 1) * span), version, namespace)
    if runs:
        outbox.wake(EMBEDDING.name, runs)
    close(run, SUCCEEDED, result=counts)


def _rescreen(
    s: Session, ids: range, version: int, namespace: str | None
) -> tuple[dict[str, int], list[int]]:
    """Judge the range's older turns again, in the caller's transaction; returns the counts and
    the embedding runs to wake."""
    chosen = select(Turn).where(Turn.id >= ids.start, Turn.id < ids.stop, Turn.screened_with < version)
    if namespace is not None:
        chosen = chosen.where(Turn.namespace == namespace)
    turns = s.exec(chosen.with_for_update()).all()
    high, cleared = [], []
    for turn in turns:
        level = screening.screen(turn.content).level
        if level == screening.HIGH and turn.sensitivity != screening.HIGH:
            high.append(turn.id)
        elif level != screening.HIGH and turn.sensitivity == screening.HIGH:
            cleared.append(turn)
    s.exec(update(Turn).where(col(Turn.id).in_([t.id for t in turns])).values(screened_with=version))
    if high:
        s.exec(update(Turn).where(col(Turn.id).in_(high)).values(sensitivity=screening.HIGH))
        s.execute(text("DELETE FROM embeddings WHERE turn_id = ANY(:ids)"), {"ids": high})
    runs = []
    if cleared:
        cleared_ids = [t.id for t in cleared]
        s.exec(update(Turn).where(col(Turn.id).in_(cleared_ids)).values(sensitivity=screening.NONE))
        runs = [
            run.id
            for turn in cleared
            if turn.deleted_at is None and embedding.embeddable(turn.role, screening.NONE)
            for run in [_embed(s, turn)]
            if run is not None and run.status == PENDING
        ]
    if high or cleared:
        log.info("re-screened %d turns: %d now high, %d no longer", len(turns), len(high), len(cleared))
    return {"turns": len(turns), "high": len(high), "cleared": len(cleared)}, runs


def _embed(s: Session, turn: Turn) -> StageRun | None:
    """An embedding row and run for a turn that may now be embedded (none when a live row of the
    thread already holds the same message and text: it serves this turn too)."""
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
        .returning(Embedding.id)
    )
    return None if row_id is None else ledger.request(s, EMBEDDING, row_id, digest[:16], {})
