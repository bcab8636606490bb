"""Errors that escape an op: a JSON answer, never a broken connection.

Starlette's outermost middleware answers an unhandled exception with a plain-text 500 and then
re-raises it, and uvicorn closes a connection whose app raised after answering, so the client's
next request on that keep-alive connection is reset. This middleware sits inside it and ends every
exception here: the database being unreachable is a 503 with ``Retry-After`` (the client's retry
will succeed once it is back), anything else a JSON 500 whose details go to the log only. A client
that disconnects before its body is read is no error: a debug line, and no answer.
"""

import logging

from starlette.requests import ClientDisconnect
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from models import db

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5


def error_response(exc: Exception) -> JSONResponse:
    if db.unavailable(exc):
        log.warning("database unavailable: %s", exc.__class__.__name__)
        return JSONResponse(
            {"error": "the database is unavailable; retry later"},
            status_code=503,
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    log.exception("unhandled error")
    return JSONResponse({"error": "internal error (logged on the server)"}, status_code=500)


class JSONErrors:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except ClientDisconnect:
            # Nobody to answer, and nothing wrong here: a client may always go (one line a
            # connection, and only in debug, so clients that hang up cannot flood the log).
            log.debug("the client disconnected before its request was read: %s", scope["path"][:200])
        except Exception as exc:
            if started:  # half an answer is out: nothing valid can follow it on this connection
                raise
            await error_response(exc)(scope, receive, send)
