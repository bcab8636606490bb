"""``/api/threads``: coding-session threads synced from clients (the third seed).

An upsert is a thin write: the thread row (its body as sent, with the version the server gives
it) and, when it has messages not yet indexed, a ``thread_index`` run, in one transaction.
Ownership: a thread belongs to the user of the token that first wrote it (a namespace-wide token
without a user owns as the namespace); only its owner writes it. Reads: the owner; any token of
the namespace when its visibility is ``organization``; any valid token when ``public``;
``private``, the owner only. The version is optimistic locking: an upsert must carry the version
it read, and a stale one answers 409 with the latest thread."""

from typing import Any, Self

from loom.threads import Thread, ThreadVisibility
from pydantic import ValidationError

from models import db
from models.base import stored, utcnow
from models.coding_thread import CodingThread
from models.stages import THREAD_INDEX
from ops.caller import Caller
from ops.errors import OpError, forbidden, invalid, not_found, validation_error
from ops.limits import check_body
from ops.schemas import Answer, Moment
from pipelines import coding_threads, thread_index
from workers import ledger, outbox

MAX_BYTES = 32 * 1024 * 1024  # a thread's body, as sent


class Conflict(OpError):
    """A stale version: the answer carries the latest thread."""

    def __init__(self, latest: dict) -> None:
        super().__init__(409, f"the thread is at version {latest['version']}: merge and send it again")
        self.latest = latest


def owner_of(caller: Caller) -> str:
    """A thread's owner: the user the token speaks for, or "" (its namespace) for one without."""
    return caller.speaks_for or ""


def readable(caller: Caller, row: CodingThread) -> bool:
    if row.visibility == ThreadVisibility.public:
        return True
    if caller.namespaces is not None and row.namespace not in caller.namespaces:
        return False
    return row.owner == owner_of(caller) or row.visibility == ThreadVisibility.organization


def parsed(body: object, path_id: str | None) -> Thread:
    if not isinstance(body, dict):
        raise invalid("the body must be a thread (a JSON object)")
    check_body(body)  # what PostgreSQL's jsonb refuses (NUL bytes, lone surrogates), numbers, depth
    try:
        thread = Thread.model_validate(body)
    except ValidationError as exc:
        raise validation_error(exc.errors()) from exc
    if path_id is not None and path_id != thread.id:
        raise invalid(f"the path names {path_id}, the body {thread.id}", "id")
    if thread.is_private:
        raise invalid("a private thread never leaves its machine: it is not synced", "is_private")
    return thread


def upsert(caller: Caller, body: object, path_id: str | None = None, namespace: str | None = None) -> dict:
    """POST /api/threads and PUT /api/threads/{id}: the thread as stored, its new version."""
    caller.require("writer")
    thread = parsed(body, path_id)
    space = caller.namespace(namespace)
    now = utcnow()
    with db.session() as s:
        row = coding_threads.locked(s, thread, space, owner_of(caller), now)
        fresh = row.version == 0
        if row.namespace != space or row.owner != owner_of(caller):
            raise forbidden("only the thread's owner writes it")
        if not fresh and thread.version != row.version:
            raise Conflict(row.body)
        written = coding_threads.write(s, row, thread, now)
        # A title changed with no new message is the conversation copy's at once (the index
        # stage gives it to a copy it creates).
        thread_index.adopt_title(s, space, thread.id, thread.metadata.title)
        run = None
        if row.message_count > row.indexed_count:
            run = ledger.request(s, THREAD_INDEX, stored(row.row_id), str(thread.version), {})
    if run is not None and run.status == "pending":
        outbox.wake(THREAD_INDEX, [stored(run.id)])
    return written


def get(caller: Caller, thread_id: str) -> dict:
    with db.session() as s:
        row = coding_threads.row_of(s, thread_id)
    if row is None or not readable(caller, row):
        raise not_found("no such thread")
    return row.body


class CodingThreadSummary(Answer):
    """What the listing and the search show of a thread, without its messages."""

    id: str
    version: int
    title: str | None
    message_count: int
    last_activity_at: Moment
    git_branch: str | None
    git_remote_url: str | None
    git_current_commit_sha: str | None
    visibility: ThreadVisibility
    owner: str | None  # null: the namespace's own

    @classmethod
    def of(cls, row: CodingThread, **more: Any) -> Self:
        """The row's summary; a subclass's own fields are ``more``."""
        return cls(
            id=row.id,
            version=row.version,
            title=row.title,
            message_count=row.message_count,
            last_activity_at=row.last_activity_at,
            git_branch=row.git_branch,
            git_remote_url=row.git_remote_url,
            git_current_commit_sha=row.body.get("git_current_commit_sha"),
            visibility=row.visibility,
            owner=row.owner or None,
            **more,
        )


class CodingThreadsAnswer(Answer):
    threads: list[CodingThreadSummary]
    limit: int
    offset: int


class FoundCodingThread(CodingThreadSummary):
    rank: float  # the full-text rank, plus 1 when the remote or the branch matches


class FoundCodingThreadsAnswer(Answer):
    threads: list[FoundCodingThread]


def list_threads(
    caller: Caller, limit: int, offset: int, namespace: str | None = None
) -> CodingThreadsAnswer:
    """The caller's own threads, by last activity, newest first."""
    space = caller.namespace(namespace)
    with db.session() as s:
        rows = coding_threads.owned(s, space, owner_of(caller), limit, offset)
    return CodingThreadsAnswer(
        threads=[CodingThreadSummary.of(row) for row in rows], limit=limit, offset=offset
    )


def search(caller: Caller, query: str, limit: int, namespace: str | None = None) -> FoundCodingThreadsAnswer:
    """Full text over title, branch, remote, tags and messages, ranked; a commit SHA prefix, a
    remote URL or a branch matches too. The namespace's threads the caller may read, the best
    ranked of the most recent ``pipelines.coding_threads.RANK_POOL`` that match."""
    space = caller.namespace(namespace)
    q = query.strip()
    if not q:
        raise invalid("q is required", "q")
    with db.session() as s:
        found = coding_threads.matching(s, space, owner_of(caller), q, limit)
        rows = coding_threads.by_ids(s, [f.id for f in found])
    return FoundCodingThreadsAnswer(
        threads=[FoundCodingThread.of(rows[f.id], rank=round(f.rank, 4)) for f in found if f.id in rows]
    )
