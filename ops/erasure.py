"""erasure.request, erasure.export and erasure.list (admin). A request is thin: it checks the
scope, appends the ``requested`` event to the erasure log and writes one ``erasure`` stage run in
one transaction, and answers the run (the worker erases in bounded batches). An export streams a
person's turns, tombstoned ones included unless asked otherwise, never embedding rows, from a
server-side cursor, and appends an ``exported`` event with the count once the stream ends.

The list reads the log itself, which spans namespaces (a request may name many) and names the
people erased (often the one place their id is left) and the tokens that asked: it is served only
to an admin token for every namespace, as ``loom erasure list`` has it."""

import json
from collections.abc import Iterator
from typing import Any

from pydantic import Field
from sqlmodel import col, select

from models import db
from models.erasure import EXPORTED, ErasureEvent
from models.stage_run import StageRun
from ops.caller import Caller
from ops.errors import invalid
from ops.operator import OperatorRequest
from ops.runs import RunAnswer, run_public, started
from ops.schemas import Answer, Identifier, Moment, NamespaceName, OpRequest, Streamed
from ops.waiting import Waiting
from pipelines import erasure
from workers import ledger
from workers.stages.erasure import ERASURE, STAGE


class ErasureRequest(OpRequest):
    user_id: str | None = Field(default=None, min_length=1, max_length=256)
    namespaces: list[NamespaceName] | None = Field(default=None, min_length=1, max_length=100)
    purge: bool = False  # a namespaces list only: remove from disk instead of tombstoning
    wait: bool = False  # answer once the run is done, or after wait_seconds
    wait_seconds: float = Field(default=30, gt=0, le=120)


class ErasureAnswer(Answer):
    erasure_id: int
    namespaces: list[str]  # the namespaces it erases in
    scope: dict[str, Any]
    run: RunAnswer  # its result counts the rows erased, by table


def request(caller: Caller, req: ErasureRequest) -> ErasureAnswer | Waiting:
    if req.namespaces is None:
        if req.user_id is None:
            raise invalid("name a user_id (in a namespace), or a namespaces list", "user_id")
        if req.purge:
            raise invalid("purge applies to a namespaces list, not to one user", "purge")
        scope: dict[str, Any] = {"namespace": caller.namespace(req.namespace), "user_id": req.user_id}
    else:
        if req.user_id is not None or req.namespace is not None:
            raise invalid("a namespaces list erases whole namespaces: no user_id or namespace", "namespaces")
        named = sorted({caller.namespace(name) for name in req.namespaces})
        scope = {"namespaces": named, "purge": req.purge}
    with db.session() as s:
        # The request's own id is its erasure id, and every later event of it carries the same.
        erasure_id = erasure.log_requested(s, caller.who, scope)
        run = ledger.request(s, ERASURE, erasure_id, "1", scope)
    namespaces = scope.get("namespaces") or [scope["namespace"]]

    def answer(run: StageRun) -> ErasureAnswer:
        return ErasureAnswer(erasure_id=erasure_id, namespaces=namespaces, scope=scope, run=run_public(run))

    return started(STAGE, run, req.wait, req.wait_seconds, answer)


class ExportRequest(OpRequest):
    user_id: str = Identifier
    include_tombstoned: bool = True


class ExportedTurn(Answer):
    thread_id: str
    msg_id: str
    agent: str
    role: str
    content: str
    reasoning: str | None
    user_id: str | None
    run_id: str | None
    metadata: dict[str, Any]
    tokens: int | None
    ts: Moment
    deleted_at: Moment | None


class ExportAnswer(Answer):
    namespace: str
    user_id: str
    include_tombstoned: bool
    turns: list[ExportedTurn]
    count: int


def export(caller: Caller, req: ExportRequest) -> Streamed:
    namespace = caller.namespace(req.namespace)
    return Streamed(_exported(caller, namespace, req.user_id, req.include_tombstoned))


def _exported(caller: Caller, namespace: str, user_id: str, tombstoned: bool) -> Iterator[bytes]:
    head = {"namespace": namespace, "user_id": user_id, "include_tombstoned": tombstoned}
    yield json.dumps(head)[:-1].encode() + b', "turns": ['
    count, complete = 0, False
    try:
        with erasure.turns_of(namespace, user_id, tombstoned) as turns:
            for turn in turns:
                turn["ts"] = turn["ts"].isoformat()
                turn["deleted_at"] = turn["deleted_at"] and turn["deleted_at"].isoformat()
                yield (b", " if count else b"") + json.dumps(turn).encode()
                count += 1
        complete = True
        yield b'], "count": ' + str(count).encode() + b"}"
    finally:  # a client that went away mid-stream is logged too, as an incomplete export
        with db.session() as s:
            rows = {"turns": count, "complete": complete}
            s.add(ErasureEvent(event=EXPORTED, actor=caller.who, scope=head, rows=rows))


class LogRequest(OperatorRequest):
    limit: int = Field(default=50, ge=1, le=100_000)


class LogEvent(Answer):
    id: int
    erasure_id: int | None  # the request it belongs to (an export belongs to none)
    event: str  # requested, finished or exported
    actor: str  # who asked: "operator", or "token <id>"
    scope: dict[str, Any]
    rows: dict[str, Any] | None  # the rows erased or exported, by table
    at: Moment


class LogAnswer(Answer):
    events: list[LogEvent]


def list_log(caller: Caller, req: LogRequest) -> LogAnswer:
    """The erasure log, newest first: who asked, when, for what scope, how many rows (requests,
    their finishing, exports)."""
    with db.session() as s:
        events = s.exec(select(ErasureEvent).order_by(col(ErasureEvent.id).desc()).limit(req.limit)).all()
    return LogAnswer(
        events=[
            LogEvent(
                id=event.id,
                erasure_id=event.erasure_id,
                event=event.event,
                actor=event.actor,
                scope=event.scope,
                rows=event.rows,
                at=event.at,
            )
            for event in events
        ]
    )
