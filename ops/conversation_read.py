"""The conversation plane's read ops: threads, get, list."""

import copy
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

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
from ops.schemas import ActedIn, Answer, Identifier, Moment, OpRequest
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
    window_days: int | None = Field(
        default=None,
        ge=1,
        le=36_500,
        description=(
            "Only threads whose last turn is at most this many days old (1-36,500); every thread when "
            "omitted."
        ),
    )
    limit: int = Field(
        default=20, ge=1, le=200, description="How many threads a page holds (1-200, default 20)."
    )
    offset: int = Field(
        default=0, ge=0, le=100_000, description="How many threads to skip, for the next page (0-100,000)."
    )


class LastTurn(Answer):
    msg_id: str = Field(description="The newest live turn's message id.")
    role: str = Field(description="Who said the newest turn.")
    ts: Moment = Field(description="When the newest turn was said.")
    excerpt: str = Field(description="The start of the newest turn's text; blank when it reads as high.")


class ThreadsItem(ThreadAnswer):
    last_turn: LastTurn | None = Field(
        default=None, description="The thread's newest live turn, in brief; null for a thread with none."
    )


class ThreadsAnswer(Answer):
    namespace: ActedIn
    threads: list[ThreadsItem] = Field(description="The threads, the most recently active first.")
    offset: int = Field(description="The offset this page starts at.")
    limit: int = Field(description="The page size asked for.")


def threads(caller: Caller, req: ThreadsRequest) -> ThreadsAnswer:
    """List the namespace's conversation threads, the most recently active first.

    Each thread with its title, turn count, times and its newest turn in brief. Use it to show a user
    their conversations or to pick one to resume; `window_days` keeps the recent ones, `limit` and
    `offset` page. With an `agent`, only the threads that agent holds turns in (or opened); `"*"` for
    every agent's."""
    namespace = caller.namespace(req.namespace)
    # Each thread's newest live turn, fetched with the page in one statement.
    last = (
        select(col(Turn.msg_id), col(Turn.role), col(Turn.ts), col(Turn.content))
        .where(
            col(Turn.namespace) == col(Thread.namespace),
            col(Turn.thread_id) == col(Thread.thread_id),
            col(Turn.deleted_at).is_(None),
        )
        .order_by(col(Turn.ts).desc(), col(Turn.id).desc())  # the reading order: a summary is not last
        .limit(1)
        .lateral("last_turn")
    )
    query = (
        select(Thread, last.c.msg_id, last.c.role, last.c.ts, last.c.content)
        .outerjoin(last, true())
        .where(col(Thread.namespace) == namespace, col(Thread.deleted_at).is_(None))
    )
    if req.window_days:
        query = query.where(col(Thread.last_turn_at) >= utcnow() - timedelta(days=req.window_days))
    if req.agent != ALL_AGENTS:
        # Threads the agent holds a live turn in, and those it opened that hold none yet.
        by_agent = exists().where(
            col(Turn.namespace) == col(Thread.namespace),
            col(Turn.thread_id) == col(Thread.thread_id),
            col(Turn.agent) == req.agent,
            col(Turn.deleted_at).is_(None),
        )
        query = query.where(or_(and_(col(Thread.agent) == req.agent, col(Thread.turn_count) == 0), by_agent))
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
    msg_id: str = Field(description="The message's id within its thread.")
    role: str = Field(description="Who said it: user, assistant, system or tool.")
    content: str = Field(
        description="The turn's text (a compaction summary reads as a system turn in the transcript)."
    )
    reasoning: str | None = Field(description="The assistant's reasoning kept with the turn, if any.")
    agent: str = Field(description="The agent whose copy this is.")
    user_id: str | None = Field(description="The end user the turn was appended for, if any.")
    run_id: str | None = Field(description="The interaction run the turn was appended in, if any.")
    metadata: dict[str, Any] = Field(description="The free-form JSON appended with the turn.")
    tokens: int | None = Field(description="The token count the client sent, if any.")
    sensitivity: Literal["high", "none"] = Field(
        description=(
            "high: the screening found a secret or personal number (the turn is never embedded nor sent to a "
            "model); none otherwise."
        )
    )
    ts: Moment = Field(description="When it was said.")


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
        col(Turn.namespace) == namespace, col(Turn.thread_id) == thread_id, col(Turn.deleted_at).is_(None)
    )
    if agent:
        query = query.where(col(Turn.agent) == agent)
    if run_id:
        query = query.where(col(Turn.run_id) == run_id)
    position = tuple_(col(Turn.ts), col(Turn.id))
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
    thread_id: Annotated[str, Field(description="The thread to read.")] = Identifier
    include_messages: bool = Field(
        default=False,
        description=(
            "true: the answer carries a page of the thread's turns too (default false: the thread alone)."
        ),
    )
    order: Literal["asc", "desc"] = Field(
        default="asc", description="The turns' order: asc (oldest first, default) or desc (newest first)."
    )
    limit: int = Field(
        default=100, ge=1, le=500, description="How many turns a page holds (1-500, default 100)."
    )
    cursor: str | None = Field(
        default=None,
        max_length=200,
        description="The next_cursor of the previous page, to read on; omitted for the first page.",
    )


class GetAnswer(ThreadAnswer):
    messages: list[TurnAnswer] | None = Field(
        default=None, description="A page of the thread's turns, with include_messages."
    )
    next_cursor: str | None = Field(
        default=None, description="Pass it as cursor for the next page; null on the last page."
    )


def get(caller: Caller, req: GetRequest) -> GetAnswer:
    """Read one conversation thread, with a page of its turns if asked.

    The thread's title, metadata, counts and times; with `include_messages: true` a page of its turns
    too, oldest first or (`order: "desc"`) newest first, `next_cursor` reading on. With an `agent`,
    only that agent's copies of the turns; every agent's when omitted or `"*"`.

    Errors: 404 when there is no such thread (or it was deleted); 422 for a cursor this server did
    not issue for the same listing."""
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
    thread_id: Annotated[str, Field(description="The thread whose turns to list.")] = Identifier
    run_id: str | None = Field(
        default=None, max_length=256, description="Only turns appended with this run id."
    )
    limit: int = Field(
        default=100, ge=1, le=500, description="How many turns a page holds (1-500, default 100)."
    )
    cursor: str | None = Field(
        default=None,
        max_length=200,
        description="The next_cursor of the previous page; omitted for the first page.",
    )


class ListAnswer(Answer):
    namespace: ActedIn
    thread_id: str = Field(description="The thread listed.")
    messages: list[TurnAnswer] = Field(description="A page of its turns in time order.")
    next_cursor: str | None = Field(description="Pass it as cursor for the next page; null on the last page.")


def list_turns(caller: Caller, req: ListRequest) -> ListAnswer:
    """List a thread's turns in time order, a page at a time.

    The transcript to replay into a model's context or to show: each turn's text, role, agent, user,
    run, metadata and screening verdict. `run_id` keeps one interaction run's turns; `next_cursor`
    reads on.

    Errors: 422 for a cursor this server did not issue for the same listing."""
    namespace = caller.namespace(req.namespace)
    with db.session() as s:
        find_thread(s, namespace, req.thread_id)
    messages, next_cursor = _page(
        LIST_CURSOR, namespace, req.thread_id, "asc", req.limit, req.cursor, named_agent(req), req.run_id
    )
    return ListAnswer(
        namespace=namespace, thread_id=req.thread_id, messages=messages, next_cursor=next_cursor
    )
