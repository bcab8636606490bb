"""The embedding actor: claim a batch of runs, embed their turns in one model call, store."""

import logging
from datetime import timedelta

from sqlmodel import col, select

from models import db, queries
from models.settings import get_settings
from models.stage_run import SKIPPED, SUCCEEDED, StageRun
from pipelines import embedding
from providers.embedders import configured_model, get_embedder
from workers import broker, ledger
from workers.stages import Stage, register
from workers.stages import actor as stage_actor

log = logging.getLogger(__name__)

STAGE = "embedding"


@stage_actor(STAGE)
def embed_turns(run_ids: list[int]) -> None:
    batch_size = get_settings().embed_batch_size
    runs = ledger.claim(STAGE, run_ids, fill=batch_size)
    if not runs:
        return  # already done, held by another worker, or waiting out its backoff
    if len(runs) >= batch_size:
        # More may be pending behind a full batch, and appends send no message while one waits:
        # wake another worker thread (or host) for them while this batch runs.
        broker.send(embed_turns, [], unless_waiting=True)
    run_of = {EMBEDDING.subject_id(run.subject): run for run in runs}
    with ledger.leased(runs):
        with db.session() as s:
            batch = embedding.load(s, list(run_of))
        try:
            embedder = get_embedder()
        except Exception as exc:
            model, vectors = None, {}
            errors = {pending.id: f"{type(exc).__name__}: {exc}" for pending in batch}
        else:
            model = embedder.name
            vectors, errors = embedding.embed_isolating(embedder.embed, batch)
    by_outcome: dict[str, list[StageRun]] = {}
    with db.session() as s:
        if vectors:
            stored = [pending for pending in batch if pending.id in vectors]
            outcomes = embedding.store(s, stored, [vectors[p.id] for p in stored], model)
            for row_id, outcome in outcomes.items():
                by_outcome.setdefault(outcome, []).append(run_of[row_id])
        # No live embedding row: the turn was deleted (or compacted) while its run waited.
        gone = set(run_of) - {pending.id for pending in batch}
        by_outcome.setdefault(embedding.DELETED, []).extend(run_of[row_id] for row_id in gone)
        ledger.finish(s, by_outcome.pop(embedding.SUCCEEDED, []), SUCCEEDED)
        for reason, done in by_outcome.items():
            ledger.finish(s, done, SKIPPED, reason=reason)
        retrying: dict[timedelta, list[int]] = {}
        for error in set(errors.values()):
            failed = [row_id for row_id, e in errors.items() if e == error]
            log.warning("embedding %d turns failed: %s", len(failed), error)
            for wait, ids in ledger.release(s, [run_of[row_id] for row_id in failed], error).items():
                retrying.setdefault(wait, []).extend(ids)
            embedding.record_error(s, failed, error)
    # After the commit: a wake-up for the released runs once their backoff has passed.
    for wait, ids in retrying.items():
        broker.send(embed_turns, ids, delay=wait)


EMBEDDING = register(Stage(STAGE, embed_turns, subject_kind="embedding"))


def reembed_outdated(limit: int) -> list[int]:
    """The re-embedding pass, after the configured model changed: the runs of up to ``limit`` turns
    whose vector another model made are revived and sent (search only compares vectors of the
    query's model, so until then those turns are found by no vector search). Returns the runs sent."""
    with db.session() as s:
        ids = list(
            s.execute(
                queries.OUTDATED_EMBEDDING_RUNS, {"model": configured_model(), "limit": limit}
            ).scalars()
        )
    if not ids:
        return []
    revived = ledger.revive(select(StageRun.id).where(col(StageRun.id).in_(ids)))
    # One wake-up: its claim fills a batch from the pending runs, and a full batch wakes the next.
    broker.send(embed_turns, [], unless_waiting=True)
    return revived
