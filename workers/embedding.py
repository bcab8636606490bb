"""The embedding actor: claim a batch of runs, embed their turns in one model call, store."""

import logging

import dramatiq
from sqlmodel import col, select

from models import db, queries
from models.settings import get_settings
from models.stage_run import SKIPPED, SUCCEEDED, StageRun
from pipelines import embedding, keys
from providers.embedders import configured_model, get_embedder
from workers import broker, ledger

log = logging.getLogger(__name__)

STAGE = "embedding"
_settings = get_settings()


@dramatiq.actor(
    broker=broker.broker,
    queue_name=STAGE,
    # A failed embed is released by the ledger, which owns attempts and backoff and sends the
    # delayed wake-up itself. Dramatiq's retries only cover an unexpected error (the database
    # going away mid-batch); the runs' lease brings those back in any case.
    max_retries=_settings.stage_max_attempts,
    min_backoff=_settings.stage_min_backoff_ms,
    max_backoff=_settings.stage_max_backoff_ms,
)
def embed_turns(run_ids: list[int]) -> None:
    batch_size = get_settings().embed_batch_size
    runs = ledger.claim(STAGE, run_ids, fill=batch_size)
    if not runs:
        return  # already done, held by another worker, or waiting out its backoff
    if len(runs) >= batch_size:
        # More may be pending behind a full batch, and appends send no message while one waits:
        # wake another worker thread (or host) for them while this batch runs.
        broker.send(embed_turns, [], unless_waiting=True)
    run_of = {keys.subject_id(run.subject): run for run in runs}
    with ledger.leased(runs):
        with db.session() as s:
            batch = embedding.load(s, list(run_of))
        try:
            embedder = get_embedder()
        except Exception as exc:
            model, vectors = None, {}
            errors = {pending.turn_id: f"{type(exc).__name__}: {exc}" for pending in batch}
        else:
            model = embedder.name
            vectors, errors = embedding.embed_isolating(embedder.embed, batch)
    by_outcome: dict[str, list[int]] = {}
    with db.session() as s:
        if vectors:
            stored = [pending for pending in batch if pending.turn_id in vectors]
            outcomes = embedding.store(s, stored, [vectors[p.turn_id] for p in stored], model)
            for turn_id, outcome in outcomes.items():
                by_outcome.setdefault(outcome, []).append(run_of[turn_id].id)
        # No embedding row means the turn is gone too.
        gone = set(run_of) - {pending.turn_id for pending in batch}
        by_outcome.setdefault(embedding.DELETED, []).extend(run_of[turn_id].id for turn_id in gone)
        ledger.finish(s, by_outcome.pop(embedding.SUCCEEDED, []), SUCCEEDED)
        for reason, ids in by_outcome.items():
            ledger.finish(s, ids, SKIPPED, reason=reason)
        retrying = []
        for error in set(errors.values()):
            failed_turns = [turn_id for turn_id, e in errors.items() if e == error]
            log.warning("embedding %d turns failed: %s", len(failed_turns), error)
            again, _ = ledger.release(s, [run_of[turn_id] for turn_id in failed_turns], error)
            embedding.record_error(s, failed_turns, error)
            retrying += again
    # After the commit: a wake-up for the released runs once their backoff has passed.
    for delay in {ledger.backoff(run.attempts) for run in retrying}:
        ids = [run.id for run in retrying if ledger.backoff(run.attempts) == delay]
        broker.send(embed_turns, ids, delay=delay)


def reembed_outdated(limit: int) -> int:
    """The re-embedding pass, after the configured model changed: the runs of up to ``limit`` turns
    whose vector another model made are revived and sent (search only compares vectors of the
    query's model, so until then those turns are found by no vector search). Returns how many."""
    with db.session() as s:
        ids = list(
            s.execute(
                queries.OUTDATED_EMBEDDING_RUNS, {"model": configured_model(), "limit": limit}
            ).scalars()
        )
    if not ids:
        return 0
    revived = ledger.revive(select(StageRun.id).where(col(StageRun.id).in_(ids)))
    for start in range(0, len(revived), ledger.BATCH):
        broker.send(embed_turns, revived[start : start + ledger.BATCH])
    return len(revived)
