"""Coding-session threads synced from clients (``/api/threads``): a thread's row written (its body
as sent, the version the server gives it, the columns listings and search read), the owner's
listing, and finding them: full text over title, branch, remote, tags and messages, a commit SHA
prefix, a remote URL or a branch; the best ranked of the most recent ``RANK_POOL`` matches a reader
may see. Plain functions in the caller's transaction."""

import re
from collections.abc import Sequence
from datetime import datetime

from loom.threads import Thread
from sqlalchemy import Row
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select

from models.coding_thread import CodingThread
from models.queries import coding_threads as queries

SEARCH_CHARS = 200_000  # of a thread's text, in its full-text index
RANK_POOL = 500  # the most recent matches ranked (ranking reads each match's whole lexeme vector)
HEX = re.compile(r"^[0-9a-f]{4,40}$")


def _like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def matching(s: Session, namespace: str, owner: str, query: str, limit: int) -> Sequence[Row]:
    """(id, rank) of the threads of ``namespace`` that ``owner`` may read (their own, or shared
    with the organization or public) matching ``query``, best first."""
    sha = HEX.match(query.lower())
    params = {
        "q": query,
        "hex": bool(sha),
        "sha_prefix": f"{query.lower()}:*" if sha else "",
        "anywhere": f"%{_like(query)}%",
        "ns": namespace,
        "owner": owner,
        "limit": limit,
        "pool": RANK_POOL,
    }
    return s.execute(queries.SEARCH, params).all()


def by_ids(s: Session, ids: list[str]) -> dict[str, CodingThread]:
    return {row.id: row for row in s.exec(select(CodingThread).where(col(CodingThread.id).in_(ids)))}


def row_of(s: Session, thread_id: str) -> CodingThread | None:
    return s.get(CodingThread, thread_id)


def owned(s: Session, namespace: str, owner: str, limit: int, offset: int) -> list[CodingThread]:
    """The owner's threads of the namespace, by last activity, newest first."""
    query = (
        select(CodingThread)
        .where(col(CodingThread.namespace) == namespace, col(CodingThread.owner) == owner)
        .order_by(col(CodingThread.last_activity_at).desc(), col(CodingThread.id).desc())
        .offset(offset)
        .limit(limit)
    )
    return list(s.exec(query))


def search_text(thread: Thread) -> str:
    """What the full-text index reads: title, branch, remote, tags, commits and messages."""
    parts = [
        thread.metadata.title or "",
        thread.git_branch or "",
        thread.git_remote_url or "",
        " ".join(thread.metadata.tags),
        " ".join(thread.git_commits),
        *(message.content for message in thread.conversation.messages),
    ]
    return "\n".join(part for part in parts if part)[:SEARCH_CHARS]


def _columns(thread: Thread) -> dict:
    return {
        "visibility": thread.visibility.value,
        "is_shared_with_support": thread.is_shared_with_support,
        "title": thread.metadata.title,
        "git_branch": thread.git_branch,
        "git_remote_url": thread.git_remote_url,
        "git_commits": list(thread.git_commits),
        "message_count": len(thread.conversation.messages),
        "created_at": thread.created_at,
        "last_activity_at": thread.last_activity_at,
        "search_text": search_text(thread),
    }


def locked(s: Session, thread: Thread, namespace: str, owner: str, now: datetime) -> CodingThread:
    """The thread's row, made (version 0, for this owner) or found, locked for the write."""
    s.exec(
        insert(CodingThread)
        .values(
            id=thread.id,
            namespace=namespace,
            owner=owner,
            version=0,
            updated_at=now,
            body={},
            **_columns(thread),
        )
        .on_conflict_do_nothing(index_elements=["id"])
    )
    return s.exec(select(CodingThread).where(col(CodingThread.id) == thread.id).with_for_update()).one()


def write(s: Session, row: CodingThread, thread: Thread, now: datetime) -> dict:
    """The thread written over its locked row as the row's next version; its body as stored."""
    thread.version = row.version + 1
    body = thread.model_dump(mode="json")
    for name, value in {
        **_columns(thread),
        "version": thread.version,
        "updated_at": now,
        "body": body,
    }.items():
        setattr(row, name, value)
    s.add(row)
    s.flush()
    return body
