"""The thread_index stage: a coding-session thread's new user and assistant messages become turns
of the conversation plane (thread id = the thread's ``T-`` id, ``msg_id`` = the message's index),
screened, embedded and recorded only where the namespace records, like any append, so
conversation search finds coding sessions too. Tool output is stored with the thread, never
embedded. A run covers the messages past ``indexed_count``; the msg ids make a second delivery
write nothing twice, and ``indexed_count`` only moves forward."""

from sqlalchemy import text
from sqlmodel import select

from models import db
from models.coding_thread import CodingThread
from models.stage_run import SKIPPED, SUCCEEDED, StageRun
from pipelines import appending
from workers import ledger, outbox
from workers.bodies import close, one_at_a_time
from workers.stages import Stage, register
from workers.stages.embedding import EMBEDDING

STAGE = "thread_index"
AGENT = "coding-thread"  # the agent its turns are logged as
INDEXED_ROLES = ("user", "assistant")

ADVANCE = text("UPDATE coding_threads SET indexed_count = greatest(indexed_count, :n) WHERE row_id = :row")


def index(run_ids: list[int]) -> None:
    one_at_a_time(THREAD_INDEX, run_ids, _work)


THREAD_INDEX = register(Stage(STAGE, index, subject_kind="coding_thread", chunk=1))


def _work(run: StageRun) -> None:
    row_id = THREAD_INDEX.subject_id(run.subject)
    with db.session() as s:
        row = s.exec(select(CodingThread).where(CodingThread.row_id == row_id)).first()
        if row is None:
            return close(run, SKIPPED, reason="deleted")
        namespace, thread_id, start, said_at = row.namespace, row.id, row.indexed_count, row.updated_at
        messages = row.body["conversation"]["messages"]
    written, wake = _write_turns(namespace, thread_id, messages, start, said_at)
    with db.session() as s:
        s.execute(ADVANCE, {"n": len(messages), "row": row_id})
        ledger.finish(s, [run], SUCCEEDED, result={"messages": len(messages) - start, "turns": written})
    if wake:
        outbox.wake(EMBEDDING.name, wake)
    return None


def _write_turns(
    namespace: str, thread_id: str, messages: list[dict], start: int, said_at
) -> tuple[int, list[int]]:
    """The user and assistant messages from ``start`` on, appended (a message's index is its
    msg_id, so one written before is a duplicate); how many were stored, and the embedding runs
    to wake."""
    wake, written = [], 0
    with db.autocommit() as conn:
        for position in range(start, len(messages)):
            message = messages[position]
            if message["role"] not in INDEXED_ROLES or not message.get("content", "").strip():
                continue
            turn = appending.NewTurn(
                namespace=namespace,
                thread_id=thread_id,
                agent=AGENT,
                role=message["role"],
                content=message["content"],
                msg_id=str(position),
                ts=said_at,
            )
            done = appending.write(conn, turn, EMBEDDING)
            written += done.outcome == appending.STORED
            if done.run_id is not None:
                wake.append(done.run_id)
    return written, wake
