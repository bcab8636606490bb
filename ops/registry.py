"""Every op by its document name: the role it needs, its request model, its handler. HTTP and the
CLI both dispatch through ``call``, so both check the same role and validate the same way."""

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio
from pydantic import BaseModel, ValidationError

from ops import (
    brief_save,
    briefs,
    context_pack,
    erasure,
    health,
    ingest,
    looms,
    memory,
    memory_extraction,
    memory_suggest,
    namespaces,
    observe,
    passes,
    runs,
    saved_messages,
    search,
    session_record,
    threads,
    turns,
    waiting,
    working_memory,
)
from ops.caller import Caller
from ops.errors import OpError, invalid, not_found, validation_error
from ops.limits import MAX_BODY_BYTES, check_body
from ops.schemas import Answer, Streamed
from ops.waiting import Waiting

Request = TypeVar("Request", bound=BaseModel)


@dataclass(frozen=True)
class Op(Generic[Request]):
    role: str
    request: type[Request]
    answer: type[Answer]  # what the handler returns, as the OpenAPI document publishes it
    handler: Callable[[Caller, Request], Answer | Streamed | Waiting[Answer]]
    body_cap: Callable[[], int] = lambda: MAX_BODY_BYTES  # the largest body it reads, in bytes
    all_namespaces: bool = False  # served only to a token for every namespace (the operator ops)

    @property
    def documentation(self) -> tuple[str, str]:
        """The op's summary and description, as the OpenAPI document publishes them: its handler's
        docstring, the first line and the rest (written for the op's callers)."""
        doc = inspect.getdoc(self.handler)
        assert doc is not None  # every handler has its docstring: the op's summary
        summary, _, description = doc.partition("\n")
        return summary, description.strip()


saved = saved_messages
OPS: dict[str, Op[Any]] = {
    "conversation.set_logging": Op(
        "admin", threads.SetLoggingRequest, threads.SetLoggingAnswer, threads.set_logging
    ),
    "conversation.append": Op("writer", turns.AppendRequest, turns.AppendAnswer, turns.append),
    "conversation.create": Op(
        "writer", threads.ThreadCreateRequest, threads.ConversationThreadAnswer, threads.create
    ),
    "conversation.update": Op(
        "writer", threads.ThreadUpdateRequest, threads.ConversationThreadAnswer, threads.update
    ),
    "conversation.threads": Op("viewer", threads.ThreadsRequest, threads.ThreadsAnswer, threads.list_threads),
    "conversation.get": Op("viewer", turns.ThreadGetRequest, turns.GetAnswer, turns.get),
    "conversation.list": Op("viewer", turns.TurnListRequest, turns.TurnListAnswer, turns.list_turns),
    "conversation.search": Op(
        "viewer", search.ConversationSearchRequest, search.ConversationSearchAnswer, search.run
    ),
    "conversation.compact": Op("writer", threads.CompactRequest, threads.CompactAnswer, threads.compact),
    "conversation.delete": Op(
        "admin", threads.ThreadDeleteRequest, threads.ThreadDeleteAnswer, threads.delete
    ),
    "conversation.ingest": Op(
        "writer", ingest.IngestRequest, ingest.IngestAnswer, ingest.ingest, ingest.body_cap
    ),
    "conversation.save_message": Op("writer", saved.SaveMessageRequest, saved.SaveMessageAnswer, saved.save),
    "conversation.unsave_message": Op("writer", saved.UnsaveRequest, saved.UnsaveAnswer, saved.unsave),
    "conversation.search_saved_messages": Op(
        "viewer", search.SearchSavedRequest, search.SearchSavedAnswer, search.search_saved
    ),
    "conversation.list_saved_messages": Op(
        "viewer", saved.ListSavedRequest, saved.ListSavedAnswer, saved.list_saved
    ),
    "conversation.saved_status": Op(
        "viewer", saved.SavedStatusRequest, saved.SavedStatusAnswer, saved.saved_status
    ),
    "erasure.request": Op("admin", erasure.ErasureRequest, erasure.ErasureAnswer, erasure.request),
    "erasure.export": Op("admin", erasure.ExportRequest, erasure.ExportAnswer, erasure.export),  # Streamed
    "erasure.list": Op("admin", erasure.LogRequest, erasure.LogAnswer, erasure.list_log, all_namespaces=True),
    "looms.list": Op("viewer", looms.LoomListRequest, looms.LoomListAnswer, looms.list_looms),
    "looms.create": Op("admin", looms.LoomCreateRequest, looms.LoomAnswer, looms.create),
    "looms.update": Op("admin", looms.LoomUpdateRequest, looms.LoomAnswer, looms.update),
    "looms.sessions": Op("viewer", looms.SessionsRequest, looms.SessionsAnswer, looms.list_sessions),
    "context.pack": Op("writer", context_pack.PackRequest, context_pack.PackAnswer, context_pack.pack),
    "memory.set": Op("writer", memory.MemorySetRequest, memory.MemorySetAnswer, memory.set_thread),
    "memory.search": Op(
        "viewer", memory.MemorySearchRequest, memory.MemorySearchAnswer, memory.search_threads
    ),
    "memory.pin": Op("writer", memory.ThreadRequest, memory.MemoryThreadAnswer, memory.pin),
    "memory.cut": Op("writer", memory.ThreadRequest, memory.MemoryThreadAnswer, memory.cut),
    "memory.reframe": Op("writer", memory.ReframeRequest, memory.ReframeAnswer, memory.reframe),
    "memory.inspect": Op("viewer", memory.InspectRequest, memory.InspectAnswer, memory.inspect),
    "memory.give": Op("writer", memory.GiveRequest, memory.GiveAnswer, memory.give),
    "memory.suggest": Op(
        "viewer", memory_suggest.SuggestRequest, memory_suggest.SuggestAnswer, memory_suggest.suggest
    ),
    "memory.session_record": Op(
        "writer",
        session_record.SessionRecordRequest,
        session_record.SessionRecordAnswer,
        session_record.session_record,
    ),
    "memory.set_from_messages": Op(
        "writer",
        memory_extraction.SetFromMessagesRequest,
        memory_extraction.SetFromMessagesAnswer,
        memory_extraction.set_from_messages,
    ),
    "namespaces.list": Op(
        "viewer", namespaces.NamespacesRequest, namespaces.NamespacesAnswer, namespaces.list_namespaces
    ),
    "runs.list": Op("viewer", runs.RunsRequest, runs.RunsAnswer, runs.list_runs, all_namespaces=True),
    "runs.get": Op("viewer", runs.RunRequest, runs.RunGetAnswer, runs.get_run, all_namespaces=True),
    "runs.retry": Op("admin", runs.RunRequest, runs.RetryAnswer, runs.retry_run, all_namespaces=True),
    "runs.retry_stage": Op(
        "admin", runs.RetryStageRequest, runs.RetryStageAnswer, runs.retry_stage, all_namespaces=True
    ),
    "passes.list": Op(
        "viewer", passes.PassesRequest, passes.PassesAnswer, passes.list_passes, all_namespaces=True
    ),
    "passes.run": Op(
        "admin", passes.PassRunRequest, passes.PassRunAnswer, passes.run_pass, all_namespaces=True
    ),
    "night_weaving.list": Op(
        "viewer", passes.NightsRequest, passes.NightsAnswer, passes.list_nights, all_namespaces=True
    ),
    "cursors.rotate_key": Op(
        "admin",
        namespaces.RotateKeyRequest,
        namespaces.RotateKeyAnswer,
        namespaces.rotate_cursor_key,
        all_namespaces=True,
    ),
    "health.get": Op("viewer", health.HealthRequest, health.HealthAnswer, health.health, all_namespaces=True),
    "session.brief_save": Op(
        "writer", brief_save.BriefSaveRequest, brief_save.BriefSaveAnswer, brief_save.save
    ),
    "session.brief_get": Op("viewer", briefs.BriefGetRequest, briefs.BriefAnswer, briefs.get),
    "session.brief_list": Op("viewer", briefs.BriefListRequest, briefs.BriefListAnswer, briefs.list_briefs),
    "session.brief_delete": Op(
        "writer", briefs.BriefDeleteRequest, briefs.BriefDeleteAnswer, briefs.delete_brief
    ),
    "memory.recall": Op(
        "viewer", memory_extraction.RecallRequest, memory_extraction.RecallAnswer, memory_extraction.recall
    ),
    "observe.record": Op("writer", observe.RecordRequest, observe.RecordAnswer, observe.record),
    "observe.crystallize": Op(
        "writer", observe.CrystallizeRequest, observe.CrystallizeAnswer, observe.crystallize
    ),
    "working_memory.get": Op(
        "viewer", working_memory.WorkingMemoryGetRequest, working_memory.BlockAnswer, working_memory.get
    ),
    "working_memory.set": Op(
        "writer",
        working_memory.WorkingMemorySetRequest,
        working_memory.WorkingMemorySetAnswer,
        working_memory.set_block,
    ),
    "working_memory.list": Op(
        "viewer",
        working_memory.WorkingMemoryListRequest,
        working_memory.WorkingMemoryListAnswer,
        working_memory.list_blocks,
    ),
}


def body_cap(name: str) -> int:
    """The body cap of an op (an unknown op's is the ops' cap: its 404 comes after the read)."""
    op = OPS.get(name)
    return op.body_cap() if op else MAX_BODY_BYTES


def authorize(name: str, caller: Caller) -> Op[Any]:
    """The op, if the caller may call it at all (its role, its bounds, its namespaces); else the
    OpError that says why. ``call`` checks this first, the dashboard to show an op's buttons."""
    op = OPS.get(name)
    if op is None:
        raise not_found(f"unknown op {name!r}")
    caller.may_call(name)
    caller.require(op.role)
    if op.all_namespaces:
        caller.require_all_namespaces()
    return op


def permits(name: str, caller: Caller) -> bool:
    try:
        authorize(name, caller)
    except OpError:
        return False
    return True


def start(name: str, caller: Caller, body: object) -> dict | Streamed | Waiting[Answer]:
    """Authorize, validate and run the op: its answer, or the ``Waiting`` it answers once runs are
    done (blocking: call it on a thread)."""
    op = authorize(name, caller)
    if not isinstance(body, dict):
        raise invalid("the request body must be a JSON object")
    check_body(body)
    try:
        request = op.request.model_validate(body)
    except ValidationError as exc:
        raise validation_error(exc.errors()) from exc
    answer = op.handler(caller, request)
    return answer if isinstance(answer, Waiting) else _dumped(name, answer)


def _dumped(name: str, answer: object) -> dict | Streamed:
    """The answer as every entry point sends it: JSON values, once, in one place."""
    if isinstance(answer, Streamed):
        return answer
    expected = OPS[name].answer
    if not isinstance(answer, expected):
        raise TypeError(f"{name} answered {type(answer).__name__}, not its {expected.__name__}")
    return answer.dumped()


def call(
    name: str, caller: Caller, body: object, block: Callable[[Waiting[Answer]], object] = waiting.block
) -> dict | Streamed:
    """The op's answer, waiting on this thread when it waits on runs (the CLI, in-process), with
    ``block`` (the CLI's shows its progress)."""
    answer = start(name, caller, body)
    return _dumped(name, block(answer)) if isinstance(answer, Waiting) else answer


async def call_async(name: str, request: Callable[[], tuple[Caller, object]]) -> dict | Streamed:
    """The op's answer from the event loop (HTTP, MCP): ``request`` (which may authenticate and
    parse, reading the database) and the op run on a thread, and a wait on runs holds none."""

    def started() -> dict | Streamed | Waiting[Answer]:
        return start(name, *request())

    answer = await anyio.to_thread.run_sync(started)
    return _dumped(name, await waiting.wait(answer)) if isinstance(answer, Waiting) else answer
