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
from typing import Annotated, Any

from pydantic import Field

from models import db
from models.stage_run import StageRun
from models.stages import ERASURE
from ops.caller import Caller
from ops.errors import invalid
from ops.schemas import (
    ActedIn,
    Answer,
    Identifier,
    Moment,
    NamespaceName,
    OperatorRequest,
    OpRequest,
    Streamed,
    WaitSeconds,
    wait_for_run,
)
from ops.schemas.runs import RunAnswer, run_public
from ops.waiting import Waiting, started
from pipelines import erasure
from workers import ledger


class ErasureRequest(OpRequest):
    user_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description=(
            "Erase this end user's rows in the request's namespace (turns, saved messages, briefs, working "
            "memory, observations)."
        ),
    )
    namespaces: list[NamespaceName] | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description=(
            "Or erase these whole namespaces (1-100, each covered by the token); not with user_id or "
            "namespace."
        ),
    )
    purge: bool = Field(
        default=False,
        description="With namespaces only: remove the rows from disk instead of tombstoning them.",
    )
    wait: bool = wait_for_run("erasure")
    wait_seconds: WaitSeconds = 30


class ErasureAnswer(Answer):
    erasure_id: int = Field(description="The erasure's id in the erasure log (erasure.list).")
    namespaces: list[str] = Field(description="The namespaces it erases in.")
    scope: dict[str, Any] = Field(
        description="What is erased: the user and namespace, or the namespaces and whether they are purged."
    )
    run: RunAnswer = Field(description="The erasure run; its result counts the rows erased by table.")


def request(caller: Caller, req: ErasureRequest) -> ErasureAnswer | Waiting[ErasureAnswer]:
    """Erase an end user's data, or whole namespaces (the right to be forgotten).

    With `user_id`: the person's turns, saved messages, briefs, working memory and observations in the
    namespace. With `namespaces`: everything in them, tombstoned or (`purge`) removed from disk. Logged
    in the erasure log and done by one erasure run, whose result counts the rows by table; answers the
    run at once, or once it is done with `wait`.

    Errors: 422 for neither or both of user_id and namespaces, or `purge` with a user_id; 403 for a
    namespace the token does not cover."""
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

    return started(ERASURE, run, req.wait, req.wait_seconds, answer)


class ExportRequest(OpRequest):
    user_id: Annotated[
        str, Field(description="The end user whose turns to export, in the request's namespace.")
    ] = Identifier
    include_tombstoned: bool = Field(
        default=True,
        description="Include the user's deleted (tombstoned) turns too, with deleted_at (default true).",
    )


class ExportedTurn(Answer):
    thread_id: str = Field(description="The conversation thread of the turn.")
    msg_id: str = Field(description="The turn's message id.")
    agent: str = Field(description="The agent whose copy this is.")
    role: str = Field(description="Who said it.")
    name: str | None = Field(description="The speaker's name appended with it, if any.")
    content: str = Field(description="The turn's text.")
    reasoning: str | None = Field(description="The assistant's reasoning kept with it, if any.")
    user_id: str | None = Field(description="The user it was appended for.")
    run_id: str | None = Field(description="The interaction run it was appended in.")
    metadata: dict[str, Any] = Field(description="The free-form JSON appended with it.")
    tokens: int | None = Field(description="Its token count, as the client sent it.")
    ts: Moment = Field(description="When it was said.")
    deleted_at: Moment | None = Field(description="When it was tombstoned; null for a live turn.")


class ExportAnswer(Answer):
    namespace: ActedIn
    user_id: str = Field(description="The user exported.")
    include_tombstoned: bool = Field(description="Whether tombstoned turns are included.")
    turns: list[ExportedTurn] = Field(
        description="The person's turns in time order (never their embeddings)."
    )
    count: int = Field(description="How many turns were exported.")


def export(caller: Caller, req: ExportRequest) -> Streamed:
    """Export everything Loom holds of one end user's turns, as one JSON document.

    The person's turns in time order (with deleted ones, `deleted_at` set, unless
    `include_tombstoned: false`), never their embeddings; streamed as it is read, and logged as
    `exported` in the erasure log."""
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
        erasure.log_exported(caller.who, head, {"turns": count, "complete": complete})


class LogRequest(OperatorRequest):
    limit: int = Field(
        default=50,
        ge=1,
        le=100_000,
        description="How many log events to answer, newest first (1-100,000, default 50).",
    )


class LogEvent(Answer):
    id: int = Field(description="The log event's id.")
    erasure_id: int | None = Field(
        description="The erasure request it belongs to (an export belongs to none)."
    )
    event: str = Field(description="requested, finished or exported.")
    actor: str = Field(description='Who asked: "operator", or "token <id>".')
    scope: dict[str, Any] = Field(
        description="What was erased or exported (user and namespace, or namespaces)."
    )
    rows: dict[str, Any] | None = Field(
        description="The rows erased or exported, by table; null until finished."
    )
    at: Moment = Field(description="When the event happened.")


class LogAnswer(Answer):
    events: list[LogEvent] = Field(description="The erasure log, newest first.")


def list_log(caller: Caller, req: LogRequest) -> LogAnswer:
    """Read the erasure log, newest first.

    Who asked, when, for what scope and how many rows: each erasure's request and finish, and each
    export. Served only to an admin of every namespace, since it names the people erased in any."""
    events = erasure.log_events(req.limit)
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
