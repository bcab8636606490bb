"""The dashboard: pages are GETs rendering Jinja2 templates from ops' answers; actions are POSTs of
forms carrying the session's CSRF token, each one op, then a redirect back (so a reload never
repeats an action). Every op goes through ``ops.registry.call`` as the signed-in token: the same
role and namespace checks as HTTP, and ``registry.permits`` decides which buttons show.

The pages are grouped by what they show: signing in (``ui.signin``), conversations, searches and
briefs (``ui.conversations``), memory and looms (``ui.memory``), the stage ledger, passes and health
(``ui.operations``); ``ui.routing`` holds what they share."""

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from ui import conversations, memory, operations, signin
from ui.routing import HERE


def install(app: FastAPI) -> None:
    for pages in (signin, conversations, operations, memory):
        app.include_router(pages.router)
    app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="ui-static")
