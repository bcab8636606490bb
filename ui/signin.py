"""Signing in to the dashboard with a Loom token, and out."""

from typing import Annotated

from fastapi import Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from models.settings import get_settings
from ops.errors import OpError
from ui import sessions
from ui.routing import TEMPLATES, Who, same_origin, ui_router
from ui.sessions import COOKIE

router = ui_router()


def _next(target: str | None) -> str:
    """Where to go after signing in: a dashboard path only (never another site)."""
    if target and target.startswith("/ui/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/ui/conversations"


@router.get("/login")
def login_form(request: Request, next: str | None = None) -> HTMLResponse:
    return TEMPLATES.TemplateResponse(request, "login.html", {"next": _next(next), "error": None})


@router.post("/login")
def login(
    request: Request, token: Annotated[str, Form(max_length=512)] = "", next: Annotated[str, Form()] = ""
) -> Response:
    same_origin(request)
    try:
        session_id, _ = sessions.sign_in(token, replacing=request.cookies.get(COOKIE))
    except OpError:
        context = {"next": _next(next), "error": "That token is not a live Loom token."}
        return TEMPLATES.TemplateResponse(request, "login.html", context, status_code=401)
    response = RedirectResponse(_next(next), status_code=303)
    response.set_cookie(
        COOKIE,
        session_id,
        max_age=int(sessions.lifetime().total_seconds()),
        path="/ui",
        httponly=True,
        samesite="strict",
        secure=get_settings().ui_cookie_secure or request.url.scheme == "https",
    )
    return response


@router.post("/logout")
def logout(request: Request) -> Response:
    """Signs out whatever session the cookie names (an expired one too) and clears the cookie."""
    same_origin(request)
    sessions.sign_out(request.cookies.get(COOKIE))
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(COOKIE, path="/ui")
    return response


@router.get("")
@router.get("/")
def home(who: Who) -> Response:
    return RedirectResponse("/ui/conversations", status_code=303)
