"""Erasing a person's data in a namespace, or whole namespaces: the steps of a scope in their order,
one batch of a step, and the erasure log's events; a person's turns read for their export. Plain
functions; the stage (``workers/stages/erasure.py``) runs the batches of a request's run, each with
its count on the run, and ``ops.erasure`` requests and exports.

By user, the person's turns and embedding rows are tombstoned (every read, search and listing
filters tombstones; only ``erasure.export`` still returns the turns), the lexical contexts of the
threads they spoke in are rebuilt with each batch (another turn's may hold their words), and the
titles of those threads are cleared (a title may quote them; the titler makes a new one from what
is left). Their memory goes from disk: the evidence of their messages, every memory thread citing
it or naming them as a subject (with its line in any tapestry, and the reflection runs that drew on
it: their question and prose), the pending proposals of the
sessions in threads they spoke in, and their name in sessions' subjects; the session briefs a token
bounded to them stored, their working memory and observations, and the coding-session threads they
own. By namespace, every turn, embedding row and thread is tombstoned and the raw transcripts
handed over whole are deleted; with ``purge`` turns, their keys, embedding rows, threads and
transcripts are deleted from disk. Either way the namespace's memory plane (looms, memory threads,
evidence, sessions, their night weavings and reflection runs), its session briefs, working
memory, observations and coding-session threads are deleted: nothing exports them."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlalchemy import TextClause
from sqlmodel import Session, col, select

from models import db
from models.erasure import EXPORTED, FINISHED, REQUESTED, ErasureEvent
from models.memory import LoomSession, MemoryThread
from models.queries import erasure as queries
from pipelines import briefs, contexts, tapestry

EXPORT_FETCH = 500  # turns a round trip of the export's cursor brings

# A step of an erasure: a statement (models.queries.erasure), or a function of the batch's
# transaction and parameters; either takes one batch (:n rows) and answers how many.
Step = TextClause | Callable[[Session, dict], int]


def _their_memory_threads(s: Session, params: dict) -> int:
    """One batch of the person's memory threads deleted, in the same transaction as their lines in
    the tapestries that hold them: a tapestry is re-rendered from the threads it keeps (as they
    read now), never chosen again."""
    doomed = set(s.execute(queries.THEIR_MEMORY_THREADS, params).scalars().all())
    if not doomed:
        return 0
    holding = s.exec(
        select(LoomSession)
        .where(col(LoomSession.namespace) == params["namespace"])
        # an ARRAY column's comparator methods are unknown to SQLAlchemy's type of a mapped column
        .where(col(LoomSession.tapestry_thread_ids).overlap(doomed))  # type: ignore[attr-defined]
        .with_for_update()
    ).all()
    for session in holding:
        kept_ids = [thread_id for thread_id in session.tapestry_thread_ids if thread_id not in doomed]
        kept = {t.id: t for t in s.exec(select(MemoryThread).where(col(MemoryThread.id).in_(kept_ids))).all()}
        session.tapestry = tapestry.render([kept[thread_id] for thread_id in kept_ids if thread_id in kept])
        session.tapestry_thread_ids = kept_ids
        session.date_updated = params["now"]
        s.add(session)
    s.flush()
    s.execute(queries.DELETE_MEMORY_THREADS, {"ids": list(doomed)})
    s.execute(queries.DELETE_REFLECTIONS_CITING, {"ids": [str(thread_id) for thread_id in doomed]})
    return len(doomed)


def _their_briefs(s: Session, params: dict) -> int:
    prefix = briefs.bounds_prefix(params["user_id"])
    return s.execute(queries.DELETE_THEIR_BRIEFS, {**params, "prefix": prefix}).scalar_one()


def _their_turns(s: Session, params: dict) -> int:
    """One batch of the person's turns tombstoned, and the contexts of the threads they spoke in
    rebuilt in the same transaction: no other turn is found by their words any more. The threads'
    rows are locked before their turns (``contexts.lock``)."""
    namespace = params["namespace"]
    spoken_in = s.execute(queries.THREADS_OF_THEIR_TURNS, params).scalars()
    locked = contexts.lock(s, [(namespace, thread_id) for thread_id in spoken_in])
    n, threads = s.execute(queries.TOMBSTONE_THEIR_TURNS, {**params, **locked}).one()
    contexts.rebuild(s, [(namespace, thread_id) for thread_id in threads])
    return n


# The steps run in this order, each until it finds less than a batch.
BY_USER: dict[str, Step] = {
    "session_proposals": queries.CLEAR_THEIR_PROPOSALS,
    "session_subjects": queries.FORGET_THEM_AS_SUBJECT,
    "session_briefs": _their_briefs,
    "working_memory": queries.DELETE_THEIR_WORKING_MEMORY,
    "observations": queries.DELETE_THEIR_OBSERVATIONS,
    "coding_threads": queries.DELETE_THEIR_CODING_THREADS,
    # Before the evidence: a thread is known as theirs by the evidence it cites.
    "memory_threads": _their_memory_threads,
    "memory_evidence": queries.DELETE_THEIR_EVIDENCE,
    "summaries": queries.TOMBSTONE_SUMMARIES_OF_THEM,
    "turns": _their_turns,
    "embeddings": queries.TOMBSTONE_THEIR_EMBEDDINGS,
}


def _by_namespace(purge: bool) -> dict[str, Step]:
    """Threads are closed first (tombstoned), so an append to one of them answers "deleted" while the
    rest goes; then turns, embedding rows and raw transcripts are tombstoned or, with ``purge``,
    deleted (a turn with its key, in one statement), and with ``purge`` the closed threads last."""
    tombstoned, deleted = queries.TOMBSTONED, queries.DELETED
    steps: dict[str, Step] = {"threads": tombstoned["threads"]}
    if purge:
        steps["turns"] = queries.PURGE_TURNS
        steps["embeddings"] = deleted["embeddings"]
    else:
        steps["turns"] = tombstoned["turns"]
        steps["embeddings"] = tombstoned["embeddings"]
    # Raw text handed over whole: no tombstone to keep, it goes in either case.
    steps["transcripts"] = deleted["transcripts"]
    # The memory plane, in the order its references allow; a loom's night weavings with it.
    for table in ("loom_sessions", "memory_threads", "memory_evidence"):
        steps[table] = deleted[table]
    steps["night_weavings"] = queries.DELETE_NIGHT_WEAVINGS
    steps["reflections"] = queries.DELETE_REFLECTIONS_IN_NAMESPACES
    steps["looms"] = deleted["looms"]
    steps["session_briefs"] = deleted["session_briefs"]  # with their revisions, saves and windows
    steps["coding_threads"] = deleted["coding_threads"]
    steps["working_memory"] = deleted["working_memory"]  # with its revisions
    steps["observations"] = deleted["observations"]
    if purge:
        steps["threads_removed"] = deleted["threads"]
    return steps


def steps_of(scope: dict) -> tuple[dict[str, Step], dict]:
    """The steps of a request's scope (its run's params: a ``user_id`` in a ``namespace``, or
    ``namespaces`` with ``purge``) by the table their counts are named for, in the order they run,
    and the parameters they share."""
    if "user_id" in scope:
        return BY_USER, {"namespace": scope["namespace"], "user_id": scope["user_id"]}
    return _by_namespace(scope.get("purge", False)), {"namespaces": scope["namespaces"]}


def one_batch(s: Session, step: Step, params: dict) -> int:
    """One batch of a step in the caller's transaction (``params``: the step's, with the batch's
    size :n and :now); how many rows it took."""
    return step(s, params) if callable(step) else s.execute(step, params).scalar_one()


def log_requested(s: Session, actor: str, scope: dict) -> int:
    """The log's ``requested`` event of a new request; its id, which is the request's erasure id."""
    erasure_id = s.execute(queries.NEXT_ERASURE_ID).scalar_one()
    requested = ErasureEvent(id=erasure_id, erasure_id=erasure_id, event=REQUESTED, actor=actor)
    requested.scope = scope
    s.add(requested)
    return erasure_id


def log_finished(s: Session, erasure_id: int, counts: dict) -> None:
    """The log's ``finished`` event, once however often the run is delivered."""
    requested = s.exec(
        select(ErasureEvent).where(
            col(ErasureEvent.erasure_id) == erasure_id, col(ErasureEvent.event) == REQUESTED
        )
    ).one()
    seen = s.exec(
        select(col(ErasureEvent.id)).where(
            col(ErasureEvent.erasure_id) == erasure_id, col(ErasureEvent.event) == FINISHED
        )
    ).first()
    if seen is None:
        finished = ErasureEvent(
            erasure_id=erasure_id, event=FINISHED, actor=requested.actor, scope=requested.scope, rows=counts
        )
        s.add(finished)


def log_exported(actor: str, scope: dict, rows: dict) -> None:
    """The log's ``exported`` event of an export, in a transaction of its own (it ends a stream)."""
    with db.session() as s:
        s.add(ErasureEvent(event=EXPORTED, actor=actor, scope=scope, rows=rows))


def log_events(limit: int) -> list[ErasureEvent]:
    """The log's latest ``limit`` events, newest first."""
    with db.session() as s:
        return list(s.exec(select(ErasureEvent).order_by(col(ErasureEvent.id).desc()).limit(limit)).all())


@contextmanager
def turns_of(namespace: str, user_id: str, tombstoned: bool) -> Iterator[Iterator[dict]]:
    """A person's turns (tombstoned ones too, with ``tombstoned``) in the order they were said, each
    a dict of the export's columns, read from a server-side cursor (EXPORT_FETCH rows at a time)
    while the block lasts."""
    with db.autocommit() as conn, conn.transaction():
        cursor = conn.cursor(name="erasure_export")
        cursor.itersize = EXPORT_FETCH
        whose = {"namespace": namespace, "user_id": user_id, "tombstoned": tombstoned}
        cursor.execute(queries.EXPORT_TURNS, whose)
        assert cursor.description is not None  # a SELECT's cursor describes its columns
        columns = [column.name for column in cursor.description]
        yield (dict(zip(columns, row, strict=True)) for row in cursor)
