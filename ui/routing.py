"""The dashboard's plumbing, shared by its pages: the route class that turns a missing session or an
op's refusal into a page, the checks every action makes (a session, the same origin, the CSRF
token), and the helpers that call an op, render a page and redirect back after an action.

Names (namespaces, thread ids, brief keys) travel as query parameters and form fields, never as
path segments: a name may hold a ``/`` or be ``..``, which a path would route elsewhere."""

import hashlib
import hmac
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlencode, urlsplit

from fastapi import APIRouter, Depends, Form, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates

from ops import registry
from ops.caller import NAMESPACE_WIDE, OWN_SESSION, OWN_USER
from ops.errors import OpError, forbidden, validation_error
from ui import render, sessions
from ui.sessions import COOKIE, SignedIn

HERE = Path(__file__).parent
TEMPLATES = Jinja2Templates(directory=HERE / "templates")
TEMPLATES.env.filters.update(render.FILTERS)
TEMPLATES.env.globals.update(render.GLOBALS)

# Every answer of /ui: nothing but Loom's own files, never framed, not cached, no referrer sent
# elsewhere.
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; form-action 'self'",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


class SignInRequired(Exception):
    pass


class UiRoute(APIRoute):
    """Sends a caller with no session to the sign-in page, renders an op's refusal (or a query
    value of the wrong type) as a page with its 4xx, and sets ``HEADERS`` on every answer."""

    def get_route_handler(self):
        handler = super().get_route_handler()

        async def answer(request: Request) -> Response:
            try:
                response = await handler(request)
            except SignInRequired:
                response = RedirectResponse(_sign_in_path(request), status_code=303)
            except RequestValidationError as exc:
                response = _refusal(request, validation_error(exc.errors(), located=True))
            except OpError as exc:
                response = _refusal(request, exc)
            response.headers.update(HEADERS)
            return response

        return answer


def _sign_in_path(request: Request) -> str:
    if request.method != "GET":  # after signing in, a GET of a form's target would be a 405
        return "/ui/login"
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return f"/ui/login?next={quote(target)}"


def _refusal(request: Request, error: OpError) -> Response:
    who = getattr(request.state, "who", None) or sessions.current(request.cookies.get(COOKIE))
    if who is None or error.status == 401:
        return RedirectResponse("/ui/login", status_code=303)
    return page(request, who, "error.html", status=error.status, error=error)


def ui_router() -> APIRouter:
    """A router for one family of the dashboard's pages, under /ui, with ``UiRoute``'s handling."""
    return APIRouter(prefix="/ui", route_class=UiRoute, include_in_schema=False)


# --- who is signed in, and the checks every action makes ---------------------------------------


def signed_in(request: Request) -> SignedIn:
    who = sessions.current(request.cookies.get(COOKIE))
    if who is None:
        raise SignInRequired
    request.state.who = who
    return who


def same_origin(request: Request) -> None:
    """A form posted from another site is refused: its Origin must be this host, or, where a
    browser sends none, its Sec-Fetch-Site must say same-origin."""
    origin = request.headers.get("origin")
    if origin is not None and origin != "null":
        if urlsplit(origin).netloc == request.headers.get("host"):
            return
    elif request.headers.get("sec-fetch-site") == "same-origin":
        return
    raise forbidden("the form must come from this site's own pages")


def acting(
    request: Request, who: Annotated[SignedIn, Depends(signed_in)], csrf: Annotated[str, Form()] = ""
) -> SignedIn:
    same_origin(request)
    sessions.check_csrf(who, csrf)
    return who


Who = Annotated[SignedIn, Depends(signed_in)]
Acting = Annotated[SignedIn, Depends(acting)]
Name = Annotated[str, Form(min_length=1, max_length=600)]


def call(who: SignedIn, op: str, **body: Any) -> dict:
    answer = registry.call(op, who.caller, {k: v for k, v in body.items() if v is not None})
    assert isinstance(answer, dict)  # the dashboard calls no op that streams (erasure.export does)
    return answer


def _signature(who: SignedIn, said: str) -> str:
    return hmac.new(who.csrf.encode(), said.encode(), hashlib.sha256).hexdigest()[:32]


def page(request: Request, who: SignedIn, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    caller = who.caller
    said = request.query_params.get("said")
    signature = request.query_params.get("sig", "")
    if said and not hmac.compare_digest(signature.encode(), _signature(who, said).encode()):
        said = None  # only what an action of this session said is shown
    return TEMPLATES.TemplateResponse(
        request,
        template,
        {
            "caller": caller,
            "csrf": who.csrf,
            "can": lambda op: registry.permits(op, caller),
            "user_bounded": caller.read_scope in (OWN_USER, OWN_SESSION),
            "all_namespaces": caller.namespaces is None,
            "said": said,
            **context,
        },
        status_code=status,
    )


def back(who: SignedIn, path: str, said: str, **params: Any) -> RedirectResponse:
    query = urlencode({**params, "said": said, "sig": _signature(who, said)})
    return RedirectResponse(f"{path}?{query}", status_code=303)


def chosen_namespace(who: SignedIn, namespace: str | None) -> str | None:
    """The namespace a page is about: the one asked for, else the token's only one; None when the
    token has several and none was asked for (the page then asks)."""
    if namespace:
        return namespace
    spaces = who.caller.namespaces
    return spaces[0] if spaces is not None and len(spaces) == 1 else None


def namespace_choices(who: SignedIn, chosen: str | None) -> list[str]:
    """What a page's namespace picker offers: the namespaces ``namespaces.list`` answers for the
    token (a token bounded to a user or a session, which may not call it, covers just its own),
    and the one the page is about if that list lacks it (a namespace holding nothing yet, reached by
    its address)."""
    if who.caller.read_scope == NAMESPACE_WIDE:
        names = [row["name"] for row in call(who, "namespaces.list")["namespaces"]]
    else:
        names = list(who.caller.namespaces or ())
    return names if not chosen or chosen in names else [*names, chosen]
