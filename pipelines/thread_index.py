"""A coding-session thread's messages as turns of the conversation plane: its user and assistant
messages past ``indexed_count`` appended through the write path of conversation.append (thread id
= the thread's ``T-`` id, ``msg_id`` = the message's index, so a message written before is a
duplicate), tool output never. Plain functions; the stage (``workers/stages/thread_index.py``)
adds the run."""

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from models import db
from models.coding_thread import CodingThread
from models.queries import coding_threads as queries
from models.queries import threads as thread_queries
from pipelines import appending, screening

AGENT = "coding-thread"  # the agent its turns are logged as
INDEXED_ROLES = ("user", "assistant")


@dataclass(frozen=True)
class Unindexed:
    namespace: str
    thread_id: str
    messages: list[dict]
    start: int  # the first message not yet indexed
    said_at: datetime
    title: str | None  # the one its client set


def unindexed(s: Session, row_id: int) -> Unindexed | None:
    """The thread's messages and where indexing stands; None for a thread deleted meanwhile."""
    row = s.exec(select(CodingThread).where(col(CodingThread.row_id) == row_id)).first()
    if row is None:
        return None
    body = row.body
    title = (body.get("metadata") or {}).get("title")
    return Unindexed(
        row.namespace, row.id, body["conversation"]["messages"], row.indexed_count, row.updated_at, title
    )


def write_turns(thread: Unindexed) -> tuple[int, list[int]]:
    """The user and assistant messages from ``start`` on, appended; how many were stored, and the
    embedding runs to wake."""
    wake, written = [], 0
    with db.autocommit() as conn:
        for position in range(thread.start, len(thread.messages)):
            message = thread.messages[position]
            if message["role"] not in INDEXED_ROLES or not message.get("content", "").strip():
                continue
            turn = appending.NewTurn(
                namespace=thread.namespace,
                thread_id=thread.thread_id,
                agent=AGENT,
                role=message["role"],
                content=message["content"],
                msg_id=str(position),
                ts=thread.said_at,
            )
            done = appending.write(conn, turn)
            written += done.outcome == appending.STORED
            if done.embedding_run_id is not None:
                wake.append(done.embedding_run_id)
    return written, wake


def adopt_title(s: Session, namespace: str, thread_id: str, title: str | None) -> None:
    """The conversation copy takes the title the client set, so the titler leaves it be; a title
    that reads as high sensitivity is not copied (titles are listed and sent with search hits)."""
    title = " ".join((title or "").split())
    if title and not screening.is_high(title):
        s.execute(
            thread_queries.ADOPT_TITLE, {"title": title, "namespace": namespace, "thread_id": thread_id}
        )


def advance(s: Session, row_id: int, indexed: int) -> None:
    s.execute(queries.ADVANCE_INDEXED, {"n": indexed, "row": row_id})
