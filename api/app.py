"""The HTTP layer: ``POST /v1/<op name>`` with a JSON body, ``GET /healthz``,
``GET /looms/by-id/{id}/sessions`` (looms.sessions, its body from the path and query), and MCP on
``/mcp`` (``api.mcp``). Thin: authenticate,
read the body (bounded), hand it to ``ops.registry.call``; every caller mistake is a 4xx with a
reason, and any other error a JSON answer (``api.errors``)."""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from api import mcp, observability, openapi, threads
from api.bodies import read_body
from api.errors import JSONErrors
from models.settings import get_settings
from ops import coding_threads, registry, waiting
from ops.caller import authenticate
from ops.errors import OpError
from ops.limits import parse_body
from ops.schemas import Streamed
from providers.embedders import load_in_background
from ui import app as ui


def create_app(warm_embedder: bool = True) -> FastAPI:
    endpoint = mcp.HttpEndpoint(get_settings().host)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if warm_embedder:
            load_in_background()
        async with endpoint.running(), waiting.listening():
            yield

    app = FastAPI(title="Loom", version="0.1.0", lifespan=lifespan)
    # MCP over streamable HTTP (``api.mcp``): GET, POST and DELETE on one path.
    app.router.routes.append(Route("/mcp", endpoint=endpoint, methods=["GET", "POST", "DELETE"]))
    app.add_middleware(JSONErrors)
    app.include_router(observability.router)  # GET /metrics, GET /healthz

    @app.exception_handler(OpError)
    async def _op_error(_: Request, exc: OpError) -> JSONResponse:
        return JSONResponse(exc.as_dict(), status_code=exc.status)

    @app.exception_handler(coding_threads.Conflict)
    async def _stale(_: Request, exc: coding_threads.Conflict) -> JSONResponse:
        return JSONResponse({**exc.as_dict(), "thread": exc.latest}, status_code=409)

    app.include_router(threads.router)  # /api/threads: coding-session threads
    ui.install(app)  # /ui: the dashboard

    app.openapi = lambda: openapi.document(app)  # the ops' own schemas, from the registry

    @app.post("/v1/{op_name}", include_in_schema=False)
    async def call_op(op_name: str, request: Request) -> Response:
        body = await read_body(request, registry.body_cap(op_name))
        authorization = request.headers.get("authorization")
        # The ops are blocking (database, broker): they run on the threadpool; a wait on their
        # runs holds no thread of it (``ops.waiting``).
        answer = await registry.call_async(op_name, lambda: (authenticate(authorization), parse_body(body)))
        if isinstance(answer, Streamed):  # sent while produced (iterated on the threadpool too)
            return StreamingResponse(answer.chunks, media_type="application/json")
        # The ops answer JSON-ready dicts: a response of our own skips FastAPI's re-encoding,
        # which walks every value of the answer again.
        return JSONResponse(answer)

    @app.get("/looms/by-id/{loom_id}/sessions", include_in_schema=False)
    async def loom_sessions(loom_id: str, request: Request) -> Response:
        """looms.sessions by the loom's id, its filters as query parameters."""
        body = {"loom_id": loom_id, **request.query_params}
        answer = await run_in_threadpool(
            _call, "looms.sessions", request.headers.get("authorization"), query_body(body)
        )
        return JSONResponse(answer)

    return app


def _call(op_name: str, authorization: str | None, body: object) -> dict | Streamed:
    caller = authenticate(authorization)
    return registry.call(op_name, caller, body)


def query_body(params: dict[str, str]) -> dict:
    """A GET route's query parameters as an op's body: numbers and booleans as JSON reads them."""
    return {
        name: json.loads(value) if value in ("true", "false") or value.isdigit() else value
        for name, value in params.items()
    }
