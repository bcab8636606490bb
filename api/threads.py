"""``/api/threads``: the coding-session threads' sync endpoints (``ops.coding_threads``). Bearer
auth like every op; a body over the thread cap is a 413, a stale version a 409 carrying the
latest thread. The GET routes' parameters are typed (published in the OpenAPI document): a
value out of its bounds is a 422 naming it, as an op's body field is."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from loom.threads import Thread
from pydantic import BaseModel, Field

from api import openapi
from api.bodies import read_body
from ops import coding_threads
from ops.caller import Caller, authenticate
from ops.limits import parse_body
from ops.schemas import NamespaceName, Text

router = APIRouter(prefix="/api/threads")


def _caller(request: Request) -> Caller:
    """The token's caller, checked before the parameters (as an op checks it before its body)."""
    return authenticate(request.headers.get("authorization"))


Authenticated = Annotated[Caller, Depends(_caller)]
Namespace = Annotated[NamespaceName | None, Query()]
ThreadId = Annotated[Text, Path(max_length=256)]


class ListParams(BaseModel):
    limit: int = Field(default=50, ge=1, le=200)
    offset: int = Field(default=0, ge=0, le=1_000_000)
    namespace: NamespaceName | None = None


class SearchParams(BaseModel):
    q: Text = Field(min_length=1, max_length=1_000)
    limit: int = Field(default=20, ge=1, le=200)
    namespace: NamespaceName | None = None


async def _upsert(request: Request, thread_id: str | None, namespace: str | None) -> Response:
    raw = await read_body(request, coding_threads.MAX_BYTES)

    def served() -> dict:
        caller = authenticate(request.headers.get("authorization"))
        return coding_threads.upsert(caller, parse_body(raw), thread_id, namespace)

    return JSONResponse(await run_in_threadpool(served))


@router.post("", include_in_schema=False)
async def create(request: Request, namespace: Namespace = None) -> Response:
    return await _upsert(request, None, namespace)


@router.put("/{thread_id}", include_in_schema=False)
async def put(thread_id: str, request: Request, namespace: Namespace = None) -> Response:
    return await _upsert(request, thread_id, namespace)


@router.get("/schema")
async def schema() -> Response:
    """The thread's JSON schema (no token: it is the published wire format)."""
    return JSONResponse(Thread.model_json_schema())


# The reads are blocking (database): plain functions, which FastAPI runs on its threadpool.
@router.get("/search", **openapi.WITH_TOKEN)
def search(caller: Authenticated, params: Annotated[SearchParams, Query()]) -> Response:
    return JSONResponse(coding_threads.search(caller, params.q, params.limit, params.namespace).dumped())


@router.get("/{thread_id}", **openapi.WITH_TOKEN)
def get(caller: Authenticated, thread_id: ThreadId) -> Response:
    return JSONResponse(coding_threads.get(caller, thread_id))


@router.get("", **openapi.WITH_TOKEN)
def list_threads(caller: Authenticated, params: Annotated[ListParams, Query()]) -> Response:
    listed = coding_threads.list_threads(caller, params.limit, params.offset, params.namespace)
    return JSONResponse(listed.dumped())
