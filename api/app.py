"""The HTTP layer: ``POST /v1/<op name>`` with a JSON body, ``GET /healthz``,
``GET /looms/by-id/{id}/sessions`` (looms.sessions, its body from the path and the typed query),
and MCP on ``/mcp`` (``api.mcp``). Thin: authenticate,
read the body (bounded), hand it to ``ops.registry.call``; every caller mistake is a 4xx with a
reason (a route's typed parameter that fails validation, the 422 an op's body field would be; a path
that is no route, a 404 in the same shape), and any other error a JSON answer (``api.errors``). The
token, and whether it may call the op, are checked before the body is read: a client without one
makes the server read nothing."""

import logging
import os
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any
from uuid import UUID

import anyio
from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, create_model
from starlette.exceptions import HTTPException
from starlette.routing import Route

from api import hosts, mcp, observability, openapi, threads
from api.bodies import read_json_body
from api.errors import JSONErrors
from models.settings import get_settings
from ops import coding_threads, looms, registry, waiting
from ops.caller import Caller, authenticate, operator_key_hash
from ops.errors import OpError, validation_error
from ops.limits import parse_body
from ops.schemas import Streamed
from providers.embedders import load_in_background, settle
from services.logs import SHOWN
from ui import app as ui

log = logging.getLogger(__name__)


class _LoomAPI(FastAPI):
    def openapi(self) -> dict[str, Any]:
        return openapi.document(self)  # the ops' own schemas, from the registry


def create_app(warm_embedder: bool = True) -> FastAPI:
    endpoint = mcp.HttpEndpoint()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        loading = load_in_background() if warm_embedder else None
        operator_key_hash()  # the key exists once the API serves: `loom search` finds it and asks here
        async with endpoint.running(), waiting.listening():
            log.info("API up (pid %d)", os.getpid(), extra=SHOWN)
            yield
        if loading is not None:
            await anyio.to_thread.run_sync(settle, loading)

    # /docs is Loom's own (``openapi.serve_docs``: no CDN); no ReDoc, whose script no dependency ships.
    app = _LoomAPI(title="Loom", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None)
    # MCP over streamable HTTP (``api.mcp``): GET, POST and DELETE on one path.
    app.router.routes.append(Route("/mcp", endpoint=endpoint, methods=["GET", "POST", "DELETE"]))
    app.add_middleware(JSONErrors)
    # Outermost: a request naming another Host is refused before anything reads it.
    app.add_middleware(hosts.HostCheck, names=hosts.answered(get_settings()))
    app.include_router(observability.router)  # GET /metrics, GET /healthz

    @app.exception_handler(OpError)
    async def _op_error(_: Request, exc: OpError) -> JSONResponse:
        return JSONResponse(exc.as_dict(), status_code=exc.status)

    @app.exception_handler(HTTPException)
    async def _no_route(request: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse(
            {"error": _no_route_reason(request, exc)}, status_code=exc.status_code, headers=exc.headers
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid_parameter(request: Request, exc: RequestValidationError) -> JSONResponse:
        return await _op_error(request, validation_error(exc.errors(), located=True))

    @app.exception_handler(coding_threads.Conflict)
    async def _stale(_: Request, exc: coding_threads.Conflict) -> JSONResponse:
        return JSONResponse({**exc.as_dict(), "thread": exc.latest}, status_code=409)

    app.include_router(threads.router)  # /api/threads: coding-session threads
    ui.install(app)  # /ui: the dashboard

    openapi.serve_docs(app)

    @app.post("/v1/{op_name}", include_in_schema=False)
    async def call_op(op_name: str, request: Request) -> Response:
        # The token's check reads the database: on the threadpool, before any of the body is read.
        caller = await anyio.to_thread.run_sync(_op_caller, op_name, request.headers.get("authorization"))
        body = await read_json_body(request, registry.body_cap(op_name))
        # The ops are blocking (database, broker): they run on the threadpool; a wait on their
        # runs holds no thread of it (``ops.waiting``).
        answer = await registry.call_async(op_name, lambda: (caller, parse_body(body)))
        if isinstance(answer, Streamed):  # sent while produced (iterated on the threadpool too)
            return StreamingResponse(answer.chunks, media_type="application/json")
        # The ops answer JSON-ready dicts: a response of our own skips FastAPI's re-encoding,
        # which walks every value of the answer again.
        return JSONResponse(answer)

    @app.get("/looms/by-id/{loom_id}/sessions", summary="List a loom's sessions", **openapi.WITH_TOKEN)
    def loom_sessions(
        caller: Annotated[Caller, Depends(_sessions_caller)],
        loom_id: Annotated[UUID, Path(description="The loom's id (a uuid, as looms.list answers it).")],
        params: Annotated[SessionsQuery, Query()],
    ) -> Response:
        """looms.sessions by the loom's id, its filters as query parameters: the loom's LoomSessions,
        newest first, a page at a time. Needs the `viewer` role."""
        body = {"loom_id": loom_id, **params.model_dump(exclude_unset=True)}
        return JSONResponse(registry.call("looms.sessions", caller, body))

    return app


def _op_caller(op_name: str, authorization: str | None) -> Caller:
    """The token's caller, if it may call the op at all (401, an unknown op's 404, 403)."""
    caller = authenticate(authorization)
    registry.authorize(op_name, caller)
    return caller


def _no_route_reason(request: Request, exc: HTTPException) -> str:
    path = request.url.path[:200]
    if exc.status_code == 404:
        return f"no route for {request.method} {path}"
    if exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "")
        return f"{request.method} is not allowed on {path} (allowed: {allowed})"
    return str(exc.detail)


def query_model(request: type[BaseModel], path: Collection[str]) -> type[BaseModel]:
    """An op's request model less the fields its route's path gives: the route's query parameters,
    with the op's own types, bounds and config (an unknown parameter is refused as an unknown field
    of its body is)."""
    fields: dict[str, Any] = {
        name: (f.annotation, f) for name, f in request.model_fields.items() if name not in path
    }
    return create_model(f"{request.__name__}Query", __config__=request.model_config, **fields)


if TYPE_CHECKING:  # a model made at run time is no type to the checker: to it, any model
    SessionsQuery = BaseModel
else:
    SessionsQuery = query_model(looms.SessionsRequest, path={"loom_id"})


def _sessions_caller(request: Request) -> Caller:
    """The token's caller, refused before the parameters are read when it may not call
    looms.sessions (as the op refuses it before reading its body)."""
    caller = authenticate(request.headers.get("authorization"))
    registry.authorize("looms.sessions", caller)
    return caller
