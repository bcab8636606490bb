"""``/api/threads``: the coding-session threads' sync endpoints (``ops.coding_threads``). Bearer
auth like every op, checked before the body is read; a body that is not JSON is a 415, one over
the thread cap a 413, a stale version a 409 carrying the
latest thread. The GET routes' parameters are typed (published in the OpenAPI document): a
value out of its bounds is a 422 naming it, as an op's body field is."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from loom.threads import Thread
from pydantic import BaseModel, Field

from api import openapi
from api.bodies import read_json_body
from ops import coding_threads
from ops.caller import Caller, authenticate
from ops.limits import parse_body
from ops.schemas import NamespaceName, Text

router = APIRouter(prefix="/api/threads")


def _caller(request: Request) -> Caller:
    """The token's caller, checked before the parameters (as an op checks it before its body)."""
    return authenticate(request.headers.get("authorization"))


Authenticated = Annotated[Caller, Depends(_caller)]
Namespace = Annotated[
    NamespaceName | None,
    Query(description="The namespace to act in; may be omitted when the token covers exactly one."),
]
ThreadId = Annotated[Text, Path(max_length=256, description="The thread's id (T- and a UUIDv7).")]


class ListParams(BaseModel):
    limit: int = Field(
        default=50, ge=1, le=200, description="How many threads a page holds (1-200, default 50)."
    )
    offset: int = Field(
        default=0,
        ge=0,
        le=1_000_000,
        description="How many threads to skip, for the next page (0-1,000,000).",
    )
    namespace: NamespaceName | None = Field(
        default=None, description="The namespace to list; may be omitted when the token covers exactly one."
    )


class SearchParams(BaseModel):
    q: Text = Field(
        min_length=1,
        max_length=1_000,
        description="Words (full text over title, branch, remote, tags and messages), a commit SHA prefix, a "
        "remote URL or a branch.",
    )
    limit: int = Field(
        default=20, ge=1, le=200, description="How many threads to answer (1-200, default 20)."
    )
    namespace: NamespaceName | None = Field(
        default=None, description="The namespace to search; may be omitted when the token covers exactly one."
    )


async def _upsert(request: Request, thread_id: str | None, namespace: str | None) -> Response:
    caller = await run_in_threadpool(_caller, request)  # the token, before any of the body is read
    raw = await read_json_body(request, coding_threads.MAX_BYTES)

    def served() -> dict:
        return coding_threads.upsert(caller, parse_body(raw), thread_id, namespace)

    return JSONResponse(await run_in_threadpool(served))


# The upserts read their body themselves (bounded by the thread cap): the document is told it.
UPSERT = openapi.reads(
    Thread,
    refusals={
        "413": f"the body is over the thread cap ({coding_threads.MAX_BYTES} bytes)",
        "415": "the body is not declared as JSON (`Content-Type: application/json`, or none)",
        "422": "the body is not a valid thread (`field` names what), or a private thread (it is not synced)",
    },
    stale="the body's version is not the stored one: the answer carries the latest thread to merge with",
)


@router.post("", summary="Upload a coding-session thread", **UPSERT)
async def create(request: Request, namespace: Namespace = None) -> Response:
    """Create or update a coding-session thread (the SDK's `Thread`), as `loom threads sync` sends
    it. The body carries the version it read (0 for a new thread); the server stores version + 1.
    Only the thread's owner (the user the token that first wrote it speaks for) writes it (403
    otherwise). Its user and assistant messages are indexed as conversation turns by the worker, so
    conversation.search finds coding sessions. Needs the `writer` role."""
    return await _upsert(request, None, namespace)


@router.put("/{thread_id}", summary="Upload a coding-session thread by its id", **UPSERT)
async def put(
    thread_id: Annotated[str, Path(description="The thread's id; must equal the body's `id`.")],
    request: Request,
    namespace: Namespace = None,
) -> Response:
    """As `POST /api/threads`, the path naming the thread (422 when it differs from the body's
    `id`)."""
    return await _upsert(request, thread_id, namespace)


@router.get("/schema", summary="The coding-session thread's JSON schema")
async def schema() -> Response:
    """The JSON schema of the SDK's `Thread` (`Thread.model_json_schema()`), the body the upserts
    take; no token: it is the published wire format."""
    return JSONResponse(Thread.model_json_schema())


# The reads are blocking (database): plain functions, which FastAPI runs on its threadpool.
@router.get("/search", summary="Search the readable coding-session threads", **openapi.WITH_TOKEN)
def search(caller: Authenticated, params: Annotated[SearchParams, Query()]) -> Response:
    """The namespace's threads the token may read, ranked by PostgreSQL full text over title,
    branch, remote, tags and messages; a commit SHA prefix, a remote URL or a branch matches too.
    The most recent 500 matches are ranked and the best `limit` answered, without messages."""
    return JSONResponse(coding_threads.search(caller, params.q, params.limit, params.namespace).dumped())


@router.get("/{thread_id}", summary="Read a coding-session thread", **openapi.WITH_TOKEN)
def get(caller: Authenticated, thread_id: ThreadId) -> Response:
    """The thread whole, to resume it: to its owner, to any token of the namespace when its
    visibility is `organization`, to any valid token when `public`; 404 otherwise."""
    return JSONResponse(coding_threads.get(caller, thread_id))


@router.get("", summary="List the caller's coding-session threads", **openapi.WITH_TOKEN)
def list_threads(caller: Authenticated, params: Annotated[ListParams, Query()]) -> Response:
    """The caller's own threads, the most recently active first, a page at a time (`limit`,
    `offset`), without their messages."""
    listed = coding_threads.list_threads(caller, params.limit, params.offset, params.namespace)
    return JSONResponse(listed.dumped())
