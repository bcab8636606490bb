"""The erasure stage: one run carries out one erasure request (``erasure.request``): a person's
data in a namespace (``user_id``), or whole namespaces (``namespaces``, with ``purge`` to remove
rather than tombstone).

By user, the person's turns and embedding rows are tombstoned (every read, search and listing
filters tombstones; only ``erasure.export`` still returns the turns), and the titles of the
threads they spoke in are cleared (a title may quote them; the titler makes a new one from what is
left). Their memory goes from disk: the evidence of their messages, every memory thread citing it
or naming them as a subject (with its line in any tapestry), the pending proposals of the sessions
in threads they spoke in, and their name in sessions' subjects; the session briefs a token
bounded to them stored, and the coding-session threads they own. By namespace, every turn,
embedding row and thread is tombstoned and the raw transcripts handed over whole are deleted; with
``purge`` turns, their keys, embedding rows, threads and transcripts are deleted from disk. Either
way the namespace's memory plane (looms, memory threads, evidence, sessions, their night
weavings), its session briefs and its coding-session threads are deleted: nothing exports them.
The erasure log gets one ``finished`` event with the counts.

Bounded and resumable: each batch of ``LOOM_ERASURE_BATCH`` rows is one transaction that also adds
its counts to the run's result, and the next batch is found by what is still there, so a run
killed anywhere is finished by the next delivery with nothing done twice and the counts whole."""

import logging
from collections.abc import Callable

from sqlalchemy import text
from sqlmodel import Session, col, select

from models import db
from models.base import utcnow
from models.erasure import FINISHED, REQUESTED, ErasureEvent
from models.memory import LoomSession, MemoryThread
from models.settings import get_settings
from models.stage_run import SUCCEEDED, StageRun
from pipelines import tapestry
from workers import ledger
from workers.bodies import one_at_a_time
from workers.stages import Stage, register

log = logging.getLogger(__name__)

STAGE = "erasure"


def erase(run_ids: list[int]) -> None:
    one_at_a_time(ERASURE, run_ids, _work)


ERASURE = register(Stage(STAGE, erase, subject_kind="erasure", chunk=1))

# The memory threads of a person: those citing evidence of their messages, and those about them.
THEIR_MEMORY_THREADS = text("""
    SELECT m.id FROM memory_threads m
    WHERE m.namespace = :namespace AND (:user_id = ANY(m.subjects) OR EXISTS (
        SELECT FROM memory_evidence e WHERE e.id = ANY(m.evidence_ids) AND e.user_id = :user_id))
    LIMIT :n FOR UPDATE
""")


def _their_memory_threads(s: Session, params: dict) -> int:
    """One batch of the person's memory threads deleted, in the same transaction as their lines in
    the tapestries that hold them: a tapestry is re-rendered from the threads it keeps (as they
    read now), never chosen again."""
    doomed = set(s.execute(THEIR_MEMORY_THREADS, params).scalars().all())
    if not doomed:
        return 0
    holding = s.exec(
        select(LoomSession)
        .where(LoomSession.namespace == params["namespace"])
        .where(col(LoomSession.tapestry_thread_ids).overlap(doomed))
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
    s.execute(text("DELETE FROM memory_threads WHERE id = ANY(:ids)"), {"ids": list(doomed)})
    return len(doomed)


# Each step takes one batch (:n rows) of what the scope still holds, and answers how many; they
# run in this order, each until it finds less than a batch. A step is a statement, or a function
# of the batch's transaction and parameters.
BY_USER: dict[str, str | Callable[[Session, dict], int]] = {
    # Proposals extraction made from the threads the person spoke in, or naming them, may quote them.
    "session_proposals": """
        WITH chosen AS (
            SELECT ls.id FROM loom_sessions ls
            WHERE ls.namespace = :namespace AND ls.pending_proposals <> '[]'::jsonb AND (
                EXISTS (SELECT FROM turns t WHERE t.namespace = ls.namespace AND t.thread_id = ls.thread_id
                          AND t.user_id = :user_id)
                OR EXISTS (SELECT FROM memory_evidence e WHERE e.loom_id = ls.loom_id
                             AND e.thread_id = ls.thread_id AND e.user_id = :user_id)
                OR EXISTS (SELECT FROM jsonb_array_elements(ls.pending_proposals) p
                             WHERE p -> 'subjects' ? :user_id))
            LIMIT :n FOR UPDATE
        ), gone AS (
            UPDATE loom_sessions l SET pending_proposals = '[]'::jsonb, date_updated = :now
            FROM chosen c WHERE l.id = c.id RETURNING 1
        )
        SELECT count(*) FROM gone
    """,
    "session_subjects": """
        WITH gone AS (
            UPDATE loom_sessions SET subjects = array_remove(subjects, :user_id), date_updated = :now
            WHERE id IN (SELECT id FROM loom_sessions
                         WHERE namespace = :namespace AND :user_id = ANY(subjects) LIMIT :n)
            RETURNING 1
        )
        SELECT count(*) FROM gone
    """,
    # The briefs a token bounded to them stored (``ops.briefs``: under "~<user>~"), revisions too.
    "session_briefs": """
        WITH gone AS (
            DELETE FROM session_briefs WHERE id IN (
                SELECT id FROM session_briefs
                WHERE namespace = :namespace AND starts_with(brief_key, '~' || :user_id || '~') LIMIT :n)
            RETURNING 1
        )
        SELECT count(*) FROM gone
    """,
    # The coding-session threads they own (their turns go with the person's turns below).
    "coding_threads": """
        WITH gone AS (
            DELETE FROM coding_threads WHERE row_id IN (
                SELECT row_id FROM coding_threads WHERE namespace = :namespace AND owner = :user_id LIMIT :n)
            RETURNING 1
        )
        SELECT count(*) FROM gone
    """,
    # Before the evidence: a thread is known as theirs by the evidence it cites.
    "memory_threads": _their_memory_threads,
    "memory_evidence": """
        WITH gone AS (
            DELETE FROM memory_evidence WHERE id IN (
                SELECT id FROM memory_evidence WHERE namespace = :namespace AND user_id = :user_id LIMIT :n)
            RETURNING 1
        )
        SELECT count(*) FROM gone
    """,
    # A compaction summary of the person's words paraphrases them: it goes with them (and its row).
    "summaries": """
        WITH chosen AS (
            SELECT s.id, s.ts FROM turns s
            WHERE s.namespace = :namespace AND s.deleted_at IS NULL AND s.metadata ? 'compacted_from'
              AND EXISTS (
                  SELECT FROM turns u
                  WHERE u.namespace = s.namespace AND u.thread_id = s.thread_id AND u.user_id = :user_id
                    AND s.metadata -> 'compacted_from' ? u.msg_id)
            LIMIT :n FOR UPDATE OF s
        ), gone AS (
            UPDATE turns t SET deleted_at = :now FROM chosen c WHERE t.id = c.id AND t.ts = c.ts
            RETURNING t.id
        ), rows AS (
            UPDATE embeddings SET deleted_at = :now
            WHERE turn_id IN (SELECT id FROM gone) AND deleted_at IS NULL
        )
        SELECT count(*) FROM gone
    """,
    "turns": """
        WITH chosen AS (
            SELECT id, ts FROM turns
            WHERE namespace = :namespace AND user_id = :user_id AND deleted_at IS NULL
            LIMIT :n FOR UPDATE
        ), gone AS (
            UPDATE turns t SET deleted_at = :now FROM chosen c WHERE t.id = c.id AND t.ts = c.ts
            RETURNING t.namespace, t.thread_id
        ), threads AS (
            UPDATE threads t SET title = NULL, turn_count = greatest(t.turn_count - g.n, 0)
            FROM (SELECT namespace, thread_id, count(*) AS n FROM gone GROUP BY 1, 2) g
            WHERE t.namespace = g.namespace AND t.thread_id = g.thread_id
        )
        SELECT count(*) FROM gone
    """,
    "embeddings": """
        WITH gone AS (
            UPDATE embeddings SET deleted_at = :now WHERE id IN (
                SELECT id FROM embeddings
                WHERE namespace = :namespace AND user_id = :user_id AND deleted_at IS NULL LIMIT :n)
            RETURNING id
        )
        SELECT count(*) FROM gone
    """,
}


def _count(change: str) -> str:
    return f"WITH gone AS ({change} RETURNING 1) SELECT count(*) FROM gone"


def _namespace_statements(purge: bool) -> dict[str, str]:
    """Threads are closed first (tombstoned), so an append to one of them answers "deleted" while the
    rest goes; then turns, embedding rows and raw transcripts are tombstoned or, with ``purge``,
    deleted (a turn with its key, in one statement), and with ``purge`` the closed threads last."""
    chosen = "SELECT {key} FROM {table} WHERE namespace = ANY(:namespaces){live} LIMIT :n"

    def tombstone(table: str, key: str = "id") -> str:
        pick = chosen.format(key=key, table=table, live=" AND deleted_at IS NULL")
        return _count(f"UPDATE {table} SET deleted_at = :now WHERE ({key}) IN ({pick})")

    def delete(table: str) -> str:
        return _count(f"DELETE FROM {table} WHERE id IN ({chosen.format(key='id', table=table, live='')})")

    statements = {"threads": tombstone("threads")}
    if purge:
        statements["turns"] = """
            WITH gone AS (
                DELETE FROM turns WHERE (id, ts) IN (
                    SELECT id, ts FROM turns WHERE namespace = ANY(:namespaces) LIMIT :n)
                RETURNING id, namespace, thread_id, agent, msg_id
            ), keys AS (
                DELETE FROM turn_keys k USING gone g
                WHERE k.namespace = g.namespace AND k.thread_id = g.thread_id AND k.agent = g.agent
                  AND k.msg_id = g.msg_id AND k.turn_id = g.id
            )
            SELECT count(*) FROM gone
        """
        statements["embeddings"] = delete("embeddings")
    else:
        statements["turns"] = tombstone("turns", "id, ts")
        statements["embeddings"] = tombstone("embeddings")
    # Raw text handed over whole: no tombstone to keep, it goes in either case.
    statements["transcripts"] = delete("transcripts")
    # The memory plane, in the order its references allow; a loom's night weavings with it.
    for table in ("loom_sessions", "memory_threads", "memory_evidence"):
        statements[table] = delete(table)
    statements["night_weavings"] = _count(
        "DELETE FROM night_weavings WHERE id IN (SELECT w.id FROM night_weavings w"
        " JOIN looms l ON l.id = w.loom_id WHERE l.namespace = ANY(:namespaces) LIMIT :n)"
    )
    statements["looms"] = delete("looms")
    statements["session_briefs"] = delete("session_briefs")  # with their revisions, saves and windows
    statements["coding_threads"] = _count(
        "DELETE FROM coding_threads WHERE row_id IN "
        "(SELECT row_id FROM coding_threads WHERE namespace = ANY(:namespaces) LIMIT :n)"
    )
    if purge:
        statements["threads_removed"] = delete("threads")
    return statements


def _work(run: StageRun) -> None:
    scope = run.params
    if "user_id" in scope:
        statements, params = BY_USER, {"namespace": scope["namespace"], "user_id": scope["user_id"]}
    else:
        statements = _namespace_statements(scope.get("purge", False))
        params = {"namespaces": scope["namespaces"]}
    batch = get_settings().erasure_batch
    with ledger.leased([run]):
        for table, step in statements.items():
            while _one_batch(run, table, step, {**params, "n": batch, "now": utcnow()}) == batch:
                pass
    with db.session() as s:
        counts = s.get(StageRun, run.id).result or {}
        _log_finished(s, ERASURE.subject_id(run.subject), counts)
        ledger.finish(s, [run], SUCCEEDED, keep_result=True)
    log.info("erasure %s finished: %s", run.subject, counts)


def _one_batch(run: StageRun, table: str, step, params: dict) -> int:
    """One batch and its count on the run's result, in one transaction."""
    with db.session() as s:
        done = step(s, params) if callable(step) else s.execute(text(step), params).scalar_one()
        ledger.add_to_result(s, run.id, {table: done})
    return done


def _log_finished(s: Session, erasure_id: int, counts: dict) -> None:
    """The log's ``finished`` event, once however often the run is delivered."""
    requested = s.exec(
        select(ErasureEvent).where(ErasureEvent.erasure_id == erasure_id, ErasureEvent.event == REQUESTED)
    ).one()
    seen = s.exec(
        select(ErasureEvent.id).where(ErasureEvent.erasure_id == erasure_id, ErasureEvent.event == FINISHED)
    ).first()
    if seen is None:
        finished = ErasureEvent(
            erasure_id=erasure_id, event=FINISHED, actor=requested.actor, scope=requested.scope, rows=counts
        )
        s.add(finished)
