"""A said turn's lexical context: the words of the previous said turn of its thread, whole, when
that turn has at most ``SHORT_CHARS`` characters (a longer one gives none, and the turn before it
is not taken instead). The lexical leg of conversation.search counts each of them 0.9 of one of
the turn's own words, in its tf and its length (``models.queries.search.CONTEXT_WEIGHT``), so that
a short reply ("Yes, the one in Paris!") is found by what it answers. Measured on both development
sets (bench/context_replica.py, bench/README.md): hybrid recall@10 0.717 to 0.917 on the dialogue
set, 0.650 to 0.655 on LongMemEval.

A said turn is a live user or assistant turn that does not read as high; only said turns have a
context and only said turns are one (a compaction summary is neither). The append writes a turn's
context in its one statement (``models.queries.turns.APPEND_TURN``). Every path that hides a said
turn (deletion, compaction, erasure, the retention TTL, re-screening) rebuilds the contexts of its
threads in the transaction that hides it (``rebuild``), so that no word of a hidden turn makes
another turn match; so does a save that stores a turn. Each locks the threads' rows (``lock``)
before any of their turns, as appends and deletes do: a writer that took a turn first and a
thread second could deadlock with a delete of that thread. The contexts stage fills the turns written
before contexts existed, a month at a time (``workers/stages/contexts.py``).

Saved messages and the memory corpora have no context: a user's saved message never carries
another user's words."""

from collections.abc import Iterable, Iterator
from datetime import datetime

from sqlmodel import Session

from models import partitions
from models.base import utcnow
from models.queries import contexts as queries
from models.queries import filled
from models.queries.partitions import TABLE, quoted
from models.settings import get_settings

# A said turn of at most this many characters is the next one's context: a long one drowns the
# turn (the whole previous turn, long or not, took LongMemEval's lexical recall@10 from 0.636 to
# 0.482: bench/README.md).
SHORT_CHARS = 200
# Threads a transaction of a month's rebuild takes (their rows are locked meanwhile).
BATCH_THREADS = 100


def lock(s: Session, threads: Iterable[tuple[str, str]]) -> dict:
    """These threads' rows (``threads``: (namespace, thread_id) pairs) locked in the caller's
    transaction, in id order; answers them as REBUILD's parameters."""
    pairs = sorted(set(threads))
    params = {"namespaces": [ns for ns, _ in pairs], "thread_ids": [thread for _, thread in pairs]}
    if pairs:
        s.execute(queries.LOCK_THREADS, params)
    return params


def rebuild(s: Session, threads: Iterable[tuple[str, str]], expired_before: datetime | None = None) -> int:
    """The contexts of these threads' said turns (``threads``: (namespace, thread_id) pairs)
    recomputed from their live said turns, in the caller's transaction, after their rows are
    locked (``lock``: a caller that also writes their turns locks them first); a turn said before
    ``expired_before`` or the retention TTL's cutoff is no one's context. Answers how many turns
    changed."""
    params = lock(s, threads)
    if not params["namespaces"]:
        return 0
    cutoffs = [c for c in (expired_before, _retention_cutoff()) if c is not None]
    rebuilt = s.execute(
        queries.REBUILD, {**params, "short": SHORT_CHARS, "expired_before": max(cutoffs, default=None)}
    )
    return rebuilt.scalar_one()


def _retention_cutoff() -> datetime | None:
    days = get_settings().retention_conversations_days
    return partitions.retention_cutoff(utcnow(), days) if days else None


def of_month(s: Session, month: datetime) -> list[tuple[str, str]]:
    """The threads holding live said turns in the month's partition of turns (none once it is
    dropped)."""
    name = partitions.name_of(month)
    if s.execute(TABLE, {"name": name}).scalar_one() is None:
        return []
    rows = s.execute(filled(queries.THREADS_OF_MONTH, partition=quoted(name))).all()
    return [(namespace, thread_id) for namespace, thread_id in rows]


def batches(threads: list[tuple[str, str]]) -> Iterator[list[tuple[str, str]]]:
    for start in range(0, len(threads), BATCH_THREADS):
        yield threads[start : start + BATCH_THREADS]
