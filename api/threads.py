"""``/api/threads``: the coding-session threads' sync endpoints (``ops.coding_threads``). Bearer
auth like every op; a body over the thread cap is a 413, a stale version a 409 carrying the
latest thread."""

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from loom.threads import Thread

from api.bodies import read_body
from ops import coding_threads
from ops.caller import authenticate
from ops.errors import invalid
from ops.limits import parse_body

router = APIRouter(prefix="/api/threads", include_in_schema=False)


def _bounded(request: Request, name: str, default: int, most: int) -> int:
    raw = request.query_params.get(name, str(default))
    if not raw.isdigit() or not 0 <= int(raw) <= most or (name == "limit" and int(raw) == 0):
        raise invalid(f"{name} must be a whole number up to {most}", name)
    return int(raw)


async def _upsert(request: Request, thread_id: str | None) -> Response:
    raw = await read_body(request, coding_threads.MAX_BYTES)

    def served() -> dict:
        caller = authenticate(request.headers.get("authorization"))
        namespace = request.query_params.get("namespace")
        return coding_threads.upsert(caller, parse_body(raw), thread_id, namespace)

    return JSONResponse(await run_in_threadpool(served))


@router.post("")
async def create(request: Request) -> Response:
    return await _upsert(request, None)


@router.put("/{thread_id}")
async def put(thread_id: str, request: Request) -> Response:
    return await _upsert(request, thread_id)


@router.get("/schema")
async def schema() -> Response:
    """The thread's JSON schema (no token: it is the published wire format)."""
    return JSONResponse(Thread.model_json_schema())


@router.get("/search")
async def search(request: Request) -> Response:
    def served() -> dict:
        caller = authenticate(request.headers.get("authorization"))
        limit = _bounded(request, "limit", 20, 200)
        query = request.query_params.get("q", "")
        if len(query) > 1_000:
            raise invalid("q is at most 1,000 characters", "q")
        return coding_threads.search(caller, query, limit, request.query_params.get("namespace"))

    return JSONResponse(await run_in_threadpool(served))


@router.get("/{thread_id}")
async def get(thread_id: str, request: Request) -> Response:
    def served() -> dict:
        return coding_threads.get(authenticate(request.headers.get("authorization")), thread_id)

    return JSONResponse(await run_in_threadpool(served))


@router.get("")
async def list_threads(request: Request) -> Response:
    def served() -> dict:
        caller = authenticate(request.headers.get("authorization"))
        limit = _bounded(request, "limit", 50, 200)
        offset = _bounded(request, "offset", 0, 1_000_000)
        return coding_threads.list_threads(caller, limit, offset, request.query_params.get("namespace"))

    return JSONResponse(await run_in_threadpool(served))
