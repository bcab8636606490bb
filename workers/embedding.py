"""The embedding actor: claim a batch of runs, embed their turns in one model call, store."""

import logging

import dramatiq

from models import db
from models.settings import get_settings
from models.stage_run import SKIPPED, SUCCEEDED
from pipelines import embedding, keys
from providers.embedders import get_embedder
from workers import broker, ledger

log = logging.getLogger(__name__)

STAGE = "embedding"
_settings = get_settings()


@dramatiq.actor(
    broker=broker.broker,
    queue_name=STAGE,
    # The ledger counts attempts and decides when a run has failed; Dramatiq only supplies the
    # backoff between them, so it may retry a message more often than a run is attempted.
    max_retries=_settings.stage_max_attempts * 3,
    min_backoff=_settings.stage_min_backoff_ms,
    max_backoff=_settings.stage_max_backoff_ms,
)
def embed_turns(run_ids: list[int]) -> None:
    batch_size = get_settings().embed_batch_size
    runs = ledger.claim(STAGE, run_ids, fill=batch_size)
    if not runs:
        return  # already done, or held by another worker
    if len(runs) >= batch_size:
        # More may be pending behind a full batch, and appends send no message while one waits:
        # wake another worker thread (or host) for them while this batch runs.
        broker.send(embed_turns, [], unless_waiting=True)
    with db.session() as s:
        batch = embedding.load(s, [keys.subject_id(run.subject) for run in runs])
    run_of = {keys.subject_id(run.subject): run for run in runs}
    try:
        embedder = get_embedder()
        vectors = embedder.embed([pending.text for pending in batch]) if batch else []
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        log.warning("embedding %d turns failed: %s", len(batch), error)
        with db.session() as s:
            retrying, _ = ledger.release(s, runs, error)
            embedding.record_error(s, list(run_of), error)
        if retrying:
            raise
        return
    with db.session() as s:
        outcomes = embedding.store(s, batch, vectors, embedder.name)
        by_outcome: dict[str, list[int]] = {}
        for turn_id, run in run_of.items():
            # No embedding row left means the turn is gone too.
            by_outcome.setdefault(outcomes.get(turn_id, embedding.DELETED), []).append(run.id)
        ledger.finish(s, by_outcome.pop(embedding.SUCCEEDED, []), SUCCEEDED)
        for reason, run_ids in by_outcome.items():
            ledger.finish(s, run_ids, SKIPPED, reason=reason)
