"""The shapes of a stage actor's body: runs embedded in batches (one model call for many), one
run at a time for stages whose runs each wait on a model; and what they share, a run released to
retry later or closed in a transaction of its own, and a batch of a run's work counted on the run."""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlmodel import Session

from models import db
from models.base import stored
from models.settings import get_settings
from models.stage_run import SKIPPED, SUCCEEDED, StageRun
from models.stages import Stage
from pipelines import embedding
from providers.embedders import get_embedder
from workers import broker, ledger

log = logging.getLogger(__name__)


def one_at_a_time(stage: Stage, run_ids: list[int], work: Callable[[StageRun], None]) -> None:
    """The body of an actor whose runs each wait on a model: claim the message's runs one at a
    time, then any other claimable run of the stage, until none is left (wake-ups are skipped
    while one waits, so one message may stand for many runs). Each claim wakes one more message,
    so idle worker threads join in and their waits on the model overlap. An unexpected error
    releases the run with its error, to back off and end ``failed`` like any other failure."""
    wanted = list(run_ids)
    while True:
        runs = ledger.claim(stage.name, wanted[:1], fill=1)
        del wanted[:1]
        if not runs:
            if wanted:
                continue
            return
        broker.send(stage, [], unless_waiting=True)
        try:
            work(runs[0])
        except Exception as exc:  # a defect or an outage: never a run left running for good
            if db.unavailable(exc):
                raise  # the lease brings the run back once the database does
            log.exception("%s run %d failed unexpectedly", stage.name, runs[0].id)
            retry_later(stage, runs[0], f"{type(exc).__name__}: {exc}")


def retry_later(stage: Stage, run: StageRun, error: str, reason: str | None = None) -> None:
    """After a transient failure of one run: back to pending with its backoff (``failed`` once out
    of attempts, ``reason`` then saying what kind), and a wake-up for when the backoff has passed."""
    with db.session() as s:
        retrying = ledger.release(s, [run], error, reason=reason)
    for wait, ids in retrying.items():
        broker.send(stage, ids, delay=wait)


def close(run: StageRun, status: str, **outcome) -> None:
    """Close one run in a transaction of its own (``outcome``: reason, result, error)."""
    with db.session() as s:
        ledger.finish(s, [run], status, **outcome)


def counted(run: StageRun, what: str, batch: Callable[[Session], int]) -> int:
    """One batch of a run's work (``batch`` answers how many rows it took) and that count added to
    the run's result as ``what``, in one transaction: a run killed between batches is finished by
    the next delivery with the counts whole (``ledger.add_to_result``)."""
    with db.session() as s:
        done = batch(s)
        ledger.add_to_result(s, stored(run.id), {what: done})
    return done


SUPERSEDED = "superseded"  # a newer run of the same subject was claimed with it


@dataclass(frozen=True)
class Vectors:
    """Where a batching embedding stage reads the texts of its runs' subjects and writes their
    vectors (``pipelines.embedding`` for turns; ``pipelines.memory`` for memory threads)."""

    load: Callable[[Session, list[int]], list[embedding.Pending]]
    # Writes what it still may; the outcome per subject id (embedding.SUCCEEDED, or a skip reason).
    store: Callable[[Session, list[embedding.Pending], list[list[float]], str], dict[int, str]]
    record_error: Callable[[Session, list[int], str], None]


def embedded_in_batches(stage: Stage, run_ids: list[int], vectors: Vectors) -> None:
    """The body of a batching embedding actor (turns, memory threads): claim a batch of the stage's
    runs, embed their texts in one model call (isolating a text that fails it), store, close or
    release each run."""
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
    for run in sorted(runs, key=lambda run: stored(run.id)):
        if (subject_id := stage.subject_id(run.subject)) in run_of:
            superseded.append(run_of[subject_id])
        run_of[subject_id] = run
    with ledger.leased(runs):
        with db.session() as s:
            batch = vectors.load(s, list(run_of))
        model: str | None = None  # the embedder's, once it answers
        made: dict[int, list[float]] = {}
        try:
            embedder = get_embedder()
        except Exception as exc:
            errors = {pending.id: f"{type(exc).__name__}: {exc}" for pending in batch}
        else:
            model = embedder.name
            made, errors = embedding.embed_isolating(embedder.embed, batch)
    by_outcome: dict[str, list[StageRun]] = {}
    with db.session() as s:
        if model is not None and made:
            kept = [pending for pending in batch if pending.id in made]
            outcomes = vectors.store(s, kept, [made[p.id] for p in kept], model)
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
