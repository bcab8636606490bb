"""The conversation plane's read ops: threads, get, list."""

import copy
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import Field
from sqlalchemy import and_, exists, or_, true, tuple_
from sqlmodel import col, select

from models import db
from models.base import utcnow
from models.conversation import Thread, Turn
from models.settings import get_settings
from ops import cursors
from ops.caller import Caller
from ops.conversation_write import ThreadAnswer, find_thread, thread_answer
from ops.schemas import Answer, Identifier, Moment, OpRequest
from pipelines import screening

ALL_AGENTS = "*"


def named_agent(req: OpRequest) -> str | None:
    """The agent a read is scoped to: one the caller named, or None for every agent's copies (a
    request naming no agent, or ``"*"``, keeps the answers of before copies per agent existed)."""
    return req.agent if "agent" in req.model_fields_set and req.agent != ALL_AGENTS else None


def listing_excerpt(text: str | None) -> str:
    """What a listing shows of a text: blank when the shown part (or 1,024 characters past it)
    reads as high."""
    if not text:
        return ""
    chars = get_settings().conversation_search_excerpt_chars
    return "" if screening.excerpt_is_high(text, chars) else text[:chars]


def _leaves(node: Any, key: str = "") -> Iterator[tuple[Any, Any, str]]:
    """(container, index or key, the key it is judged under) for every key and scalar inside."""
    stack = [(key, node)]
    while stack:
        key, node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in list(items):
            name = k if isinstance(k, str) else key  # a list's items are judged under its key
            if isinstance(v, dict | list):
                stack.append((name, v))
            yield node, k, name


def listing_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """What a listing shows of metadata. Ordinary metadata costs one screen of its ``key = value``
    lines; when those read as high, each key that reads as high is dropped with its value, each
    value that reads as high (alone, or as its key's value: ``{"password": "Tr0ub4dor&3"}``) shown
    blank, and if the rest still reads as high nothing is shown."""

    def lines(meta: dict[str, Any]) -> str:
        return "\n".join(
            f"{name} = {node[k]}" if not isinstance(node[k], dict | list) else str(k)
            for node, k, name in _leaves(meta)
        )

    if not metadata or not screening.is_high(lines(metadata)):
        return metadata
    shown = copy.deepcopy(metadata)
    for node, k, name in list(_leaves(shown)):
        if isinstance(k, str) and screening.is_high(k):
            del node[k]
        elif not isinstance(node[k], dict | list):
            value = str(node[k])
            if screening.is_high(value) or screening.is_high(f"{name} = {value}"):
                node[k] = ""
    return {} if screening.is_high(lines(shown)) else shown


class ThreadsRequest(OpRequest):
    window_days: int | None = Field(default=None, ge=1, le=36_500)
    limit: int = Field(default=20, ge=1, le=200)
    offset: int = Field(default=0, ge=0, le=100_000)


class LastTurn(Answer):
    msg_id: str
    role: str
    ts: Moment
    excerpt: str  # blank when it reads as high


class ThreadsItem(ThreadAnswer):
    last_turn: LastTurn | None = None


class ThreadsAnswer(Answer):
    namespace: str
    threads: list[ThreadsItem]
    offset: int
    limit: int


def threads(caller: Caller, req: ThreadsRequest) -> ThreadsAnswer:
    namespace = caller.namespace(req.namespace)
    # Each thread's newest live turn, fetched with the page in one statement.
    last = (
        select(Turn.msg_id, Turn.role, Turn.ts, Turn.content)
        .where(
            Turn.namespace == Thread.namespace, Turn.thread_id == Thread.thread_id, Turn.deleted_at.is_(None)
        )
        .order_by(col(Turn.ts).desc(), col(Turn.id).desc())  # the reading order: a summary is not last
        .limit(1)
        .lateral("last_turn")
    )
    query = (
        select(Thread, last.c.msg_id, last.c.role, last.c.ts, last.c.content)
        .outerjoin(last, true())
        .where(Thread.namespace == namespace, Thread.deleted_at.is_(None))
    )
    if req.window_days:
        query = query.where(Thread.last_turn_at >= utcnow() - timedelta(days=req.window_days))
    if req.agent != ALL_AGENTS:
        # Threads the agent holds a live turn in, and those it opened that hold none yet.
        by_agent = exists().where(
            Turn.namespace == Thread.namespace,
            Turn.thread_id == Thread.thread_id,
            Turn.agent == req.agent,
            Turn.deleted_at.is_(None),
        )
        query = query.where(or_(and_(Thread.agent == req.agent, Thread.turn_count == 0), by_agent))
    query = (
        query.order_by(col(Thread.last_turn_at).desc(), col(Thread.id).desc())
        .offset(req.offset)
        .limit(req.limit)
    )
    with db.session() as s:
        rows = s.exec(query).all()
    items = [
        thread_answer(
            thread,
            ThreadsItem,
            title=listing_excerpt(thread.title) or None,
            metadata=listing_metadata(thread.meta),
            last_turn=None
            if msg_id is None
            else LastTurn(msg_id=msg_id, role=role, ts=ts, excerpt=listing_excerpt(content)),
        )
        for thread, msg_id, role, ts, content in rows
    ]
    return ThreadsAnswer(namespace=namespace, threads=items, offset=req.offset, limit=req.limit)


class TurnAnswer(Answer):
    msg_id: str
    role: str
    content: str
    reasoning: str | None
    agent: str
    user_id: str | None
    run_id: str | None
    metadata: dict[str, Any]
    tokens: int | None
    sensitivity: Literal["high", "none"]
    ts: Moment


def turn_answer(turn: Turn) -> TurnAnswer:
    return TurnAnswer(
        msg_id=turn.msg_id,
        role=turn.role,
        content=turn.content,
        reasoning=turn.reasoning,
        agent=turn.agent,
        user_id=turn.user_id,
        run_id=turn.run_id,
        metadata=turn.meta,
        tokens=turn.tokens,
        sensitivity=turn.sensitivity,
        ts=turn.ts,
    )


# A page ends at a turn: its (ts, id).
GET_CURSOR = cursors.Kind("conversation.get", (datetime, int))
LIST_CURSOR = cursors.Kind("conversation.list", (datetime, int))


def _page(
    kind: cursors.Kind,
    namespace: str,
    thread_id: str,
    order: str,
    limit: int,
    cursor: str | None,
    agent: str | None,
    run_id: str | None = None,
) -> tuple[list[TurnAnswer], str | None]:
    """Live turns of a thread (one agent's copies, or every agent's) in (ts, id) order, ``limit``
    at a time, and the cursor that continues the walk (None at its end). By time first: a
    compaction's summary carries the time of the first turn it replaced, and reads in their place."""
    query = select(Turn).where(
        Turn.namespace == namespace, Turn.thread_id == thread_id, Turn.deleted_at.is_(None)
    )
    if agent:
        query = query.where(Turn.agent == agent)
    if run_id:
        query = query.where(Turn.run_id == run_id)
    position = tuple_(Turn.ts, Turn.id)
    scope = (namespace, thread_id, agent, order, run_id)  # what the rows are chosen by
    if cursor:
        after = tuple_(*cursors.decode(kind, scope, cursor))
        query = query.where(position < after if order == "desc" else position > after)
    if order == "desc":
        query = query.order_by(col(Turn.ts).desc(), col(Turn.id).desc())
    else:
        query = query.order_by(col(Turn.ts), col(Turn.id))
    with db.session() as s:
        rows = list(s.exec(query.limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return (
        [turn_answer(turn) for turn in rows],
        cursors.encode(kind, scope, (rows[-1].ts, rows[-1].id)) if more else None,
    )


class GetRequest(OpRequest):
    thread_id: str = Identifier
    include_messages: bool = False
    order: Literal["asc", "desc"] = "asc"
    limit: int = Field(default=100, ge=1, le=500)
    cursor: str | None = Field(default=None, max_length=200)


class GetAnswer(ThreadAnswer):
    messages: list[TurnAnswer] | None = None  # with include_messages
    next_cursor: str | None = None


def get(caller: Caller, req: GetRequest) -> GetAnswer:
    namespace = caller.namespace(req.namespace)
    with db.session() as s:
        thread = find_thread(s, namespace, req.thread_id)
    if not req.include_messages:
        return thread_answer(thread, GetAnswer)
    messages, next_cursor = _page(
        GET_CURSOR, namespace, req.thread_id, req.order, req.limit, req.cursor, named_agent(req)
    )
    return thread_answer(thread, GetAnswer, messages=messages, next_cursor=next_cursor)


class ListRequest(OpRequest):
    thread_id: str = Identifier
    run_id: str | None = Field(default=None, max_length=256)
    limit: int = Field(default=100, ge=1, le=500)
    cursor: str | None = Field(default=None, max_length=200)


class ListAnswer(Answer):
    namespace: str
    thread_id: str
    messages: list[TurnAnswer]
    next_cursor: str | None


def list_turns(caller: Caller, req: ListRequest) -> ListAnswer:
    namespace = caller.namespace(req.namespace)
    with db.session() as s:
        find_thread(s, namespace, req.thread_id)
    messages, next_cursor = _page(
        LIST_CURSOR, namespace, req.thread_id, "asc", req.limit, req.cursor, named_agent(req), req.run_id
    )
    return ListAnswer(
        namespace=namespace, thread_id=req.thread_id, messages=messages, next_cursor=next_cursor
    )
