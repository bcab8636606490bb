"""The erasure stage: one run carries out one erasure request (``erasure.request``): a person's
data in a namespace (``user_id``), or whole namespaces (``namespaces``, with ``purge`` to remove
rather than tombstone).

By user, the person's turns and embedding rows are tombstoned (every read, search and listing
filters tombstones; only ``erasure.export`` still returns the turns), and the titles of the
threads they spoke in are cleared (a title may quote them; the titler makes a new one from what is
left). By namespace, every turn, embedding row and thread is tombstoned and the raw transcripts
handed over whole are deleted; with ``purge`` turns, their keys, embedding rows, threads and
transcripts are deleted from disk. The erasure log gets one ``finished`` event with the counts.

Bounded and resumable: each batch of ``LOOM_ERASURE_BATCH`` rows is one transaction that also adds
its counts to the run's result, and the next batch is found by what is still there, so a run
killed anywhere is finished by the next delivery with nothing done twice and the counts whole."""

import logging

from sqlalchemy import text
from sqlmodel import Session, select

from models import db
from models.base import utcnow
from models.erasure import FINISHED, REQUESTED, ErasureEvent
from models.settings import get_settings
from models.stage_run import SUCCEEDED, StageRun
from workers import ledger
from workers.stages import Stage, one_at_a_time, register
from workers.stages import actor as stage_actor

log = logging.getLogger(__name__)

STAGE = "erasure"


@stage_actor(STAGE)
def erase(run_ids: list[int]) -> None:
    one_at_a_time(ERASURE, run_ids, _work)


ERASURE = register(Stage(STAGE, erase, subject_kind="erasure", chunk=1))

# Each statement takes one batch (:n rows) of what the scope still holds, and answers how many.
BY_USER = {
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


def _namespace_statements(purge: bool) -> dict[str, str]:
    """One statement a table, tombstoning (or with ``purge`` deleting) a batch of the namespaces'."""

    def batch(table: str, key: str = "id") -> str:
        live = "" if purge else " AND deleted_at IS NULL"
        chosen = f"SELECT {key} FROM {table} WHERE namespace = ANY(:namespaces){live} LIMIT :n"
        change = f"DELETE FROM {table}" if purge else f"UPDATE {table} SET deleted_at = :now"
        return f"WITH gone AS ({change} WHERE ({key}) IN ({chosen}) RETURNING 1) SELECT count(*) FROM gone"

    statements = {
        "turns": batch("turns", "id, ts"),
        "embeddings": batch("embeddings"),
        "threads": batch("threads"),
        # Raw text handed over whole: no tombstone to keep, it goes in either case.
        "transcripts": (
            "WITH gone AS (DELETE FROM transcripts WHERE id IN (SELECT id FROM transcripts "
            "WHERE namespace = ANY(:namespaces) LIMIT :n) RETURNING 1) SELECT count(*) FROM gone"
        ),
    }
    if purge:
        statements["turn_keys"] = (
            "WITH gone AS (DELETE FROM turn_keys WHERE (namespace, thread_id, agent, msg_id) IN ("
            "SELECT namespace, thread_id, agent, msg_id FROM turn_keys WHERE namespace = ANY(:namespaces) "
            "LIMIT :n) RETURNING 1) SELECT count(*) FROM gone"
        )
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
        for table, statement in statements.items():
            while _one_batch(run, table, text(statement), {**params, "n": batch, "now": utcnow()}) == batch:
                pass
    with db.session() as s:
        counts = s.get(StageRun, run.id).result or {}
        _log_finished(s, ERASURE.subject_id(run.subject), counts)
        ledger.finish(s, [run], SUCCEEDED, result=counts)
    log.info("erasure %s finished: %s", run.subject, counts)


def _one_batch(run: StageRun, table: str, statement, params: dict) -> int:
    """One batch and its count on the run's result, in one transaction."""
    with db.session() as s:
        done = s.execute(statement, params).scalar_one()
        if done:
            s.execute(
                text(
                    "UPDATE stage_runs SET result = coalesce(result, '{}'::jsonb) || jsonb_build_object("
                    "CAST(:table AS text), coalesce((result ->> CAST(:table AS text))::bigint, 0) + :done) "
                    "WHERE id = :id"
                ),
                {"table": table, "done": done, "id": run.id},
            )
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
