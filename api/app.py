"""The HTTP layer: ``POST /v1/<op name>`` with a JSON body, ``GET /healthz``. Thin: authenticate,
parse, hand the body to ``ops.registry.call``; every caller mistake is a 4xx with a reason."""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import redis
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from sqlalchemy import text

from models import db
from models.settings import get_settings
from ops import registry
from ops.caller import authenticate
from ops.errors import OpError
from providers.embedders import load_in_background


def create_app(warm_embedder: bool = True) -> FastAPI:
    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if warm_embedder:
            load_in_background()
        yield

    app = FastAPI(title="Loom", version="0.1.0", lifespan=lifespan)

    @app.exception_handler(OpError)
    async def _op_error(_: Request, exc: OpError) -> JSONResponse:
        return JSONResponse(exc.as_dict(), status_code=exc.status)

    @app.get("/healthz")
    def healthz() -> JSONResponse:
        checks = {}
        try:
            with db.session() as s:
                s.exec(text("SELECT 1"))
            checks["database"] = "ok"
        except Exception as exc:
            checks["database"] = f"error: {exc}"
        try:
            redis.Redis.from_url(get_settings().redis_url, socket_timeout=2).ping()
            checks["broker"] = "ok"
        except Exception as exc:
            checks["broker"] = f"error: {exc}"
        healthy = all(v == "ok" for v in checks.values())
        return JSONResponse(
            {"status": "ok" if healthy else "degraded", **checks}, status_code=200 if healthy else 503
        )

    @app.post("/v1/{op_name}")
    async def call_op(op_name: str, request: Request) -> JSONResponse:
        body = await request.body()
        # The ops are blocking (database, broker): run them on the threadpool.
        answer = await run_in_threadpool(_handle, op_name, request.headers.get("authorization"), body)
        # The ops answer JSON-ready dicts: a response of our own skips FastAPI's re-encoding,
        # which walks every value of the answer again.
        return JSONResponse(answer)

    return app


def _handle(op_name: str, authorization: str | None, body: bytes) -> dict:
    caller = authenticate(authorization)
    try:
        parsed = json.loads(body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise OpError(400, f"the request body is not valid JSON: {exc}") from exc
    return registry.call(op_name, caller, parsed)
