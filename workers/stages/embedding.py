"""The embedding actor: claim a batch of runs, embed their turns in one model call, store; and that
batching body (``embed_batch``), which the memory threads' embedding stage shares."""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlmodel import Session

from models import db
from models.settings import get_settings
from models.stage_run import SKIPPED, SUCCEEDED, StageRun
from pipelines import embedding
from providers.embedders import get_embedder
from workers import broker, ledger
from workers.stages import Stage, register

log = logging.getLogger(__name__)

STAGE = "embedding"
SUPERSEDED = "superseded"  # a newer run of the same subject was claimed with it


@dataclass(frozen=True)
class Vectors:
    """Where a batching embedding stage reads the texts of its runs' subjects and writes their
    vectors (``pipelines.embedding`` for turns; ``pipelines.memory`` for memory threads)."""

    load: Callable[[Session, list[int]], list[embedding.Pending]]
    # Writes what it still may; the outcome per subject id (embedding.SUCCEEDED, or a skip reason).
    store: Callable[[Session, list[embedding.Pending], list[list[float]], str], dict[int, str]]
    record_error: Callable[[Session, list[int], str], None]


def embed_batch(stage: Stage, run_ids: list[int], vectors: Vectors) -> None:
    """The body of a batching embedding actor: claim a batch of the stage's runs, embed their
    texts in one model call (isolating a text that fails it), store, close or release each run."""
    batch_size = get_settings().embed_batch_size
    runs = ledger.claim(stage.name, run_ids, fill=batch_size)
    if not runs:
        return  # already done, held by another worker, or waiting out its backoff
    if len(runs) >= batch_size:
        # More may be pending behind a full batch, and appends send no message while one waits:
        # wake another worker thread (or host) for them while this batch runs.
        broker.send(stage, [], unless_waiting=True)
    # A subject whose text changed (a reframed memory thread) may have two runs in the batch: the
    # newest stands for it, since the text is read as it is now.
    run_of: dict[int, StageRun] = {}
    superseded = []
    for run in sorted(runs, key=lambda run: run.id):
        if (subject_id := stage.subject_id(run.subject)) in run_of:
            superseded.append(run_of[subject_id])
        run_of[subject_id] = run
    with ledger.leased(runs):
        with db.session() as s:
            batch = vectors.load(s, list(run_of))
        try:
            embedder = get_embedder()
        except Exception as exc:
            model, made = None, {}
            errors = {pending.id: f"{type(exc).__name__}: {exc}" for pending in batch}
        else:
            model = embedder.name
            made, errors = embedding.embed_isolating(embedder.embed, batch)
    by_outcome: dict[str, list[StageRun]] = {}
    with db.session() as s:
        if made:
            stored = [pending for pending in batch if pending.id in made]
            outcomes = vectors.store(s, stored, [made[p.id] for p in stored], model)
            for subject_id, outcome in outcomes.items():
                by_outcome.setdefault(outcome, []).append(run_of[subject_id])
        # Nothing live to embed: the subject was deleted (or compacted) while its run waited.
        gone = set(run_of) - {pending.id for pending in batch}
        by_outcome.setdefault(embedding.DELETED, []).extend(run_of[subject_id] for subject_id in gone)
        by_outcome.setdefault(SUPERSEDED, []).extend(superseded)
        ledger.finish(s, by_outcome.pop(embedding.SUCCEEDED, []), SUCCEEDED)
        for reason, done in by_outcome.items():
            ledger.finish(s, done, SKIPPED, reason=reason)
        retrying: dict[timedelta, list[int]] = {}
        for error in set(errors.values()):
            failed = [subject_id for subject_id, e in errors.items() if e == error]
            log.warning("%s: embedding %d texts failed: %s", stage.name, len(failed), error)
            for wait, ids in ledger.release(s, [run_of[subject_id] for subject_id in failed], error).items():
                retrying.setdefault(wait, []).extend(ids)
            vectors.record_error(s, failed, error)
    # After the commit: a wake-up for the released runs once their backoff has passed.
    for wait, ids in retrying.items():
        broker.send(stage, ids, delay=wait)


TURN_VECTORS = Vectors(embedding.load, embedding.store, embedding.record_error)


def embed_turns(run_ids: list[int]) -> None:
    embed_batch(EMBEDDING, run_ids, TURN_VECTORS)


EMBEDDING = register(Stage(STAGE, embed_turns, subject_kind="embedding"))
