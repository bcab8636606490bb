"""The dashboard's routes: pages are GETs rendering Jinja2 templates from ops' answers; actions are
POSTs of forms carrying the session's CSRF token, each one op, then a redirect back (so a reload
never repeats an action). Every op goes through ``ops.registry.call`` as the signed-in token:
the same role and namespace checks as HTTP, and ``registry.permits`` decides which buttons show.

Names (namespaces, thread ids, brief keys) travel as query parameters and form fields, never as
path segments: a name may hold a ``/`` or be ``..``, which a path would route elsewhere."""

import hashlib
import hmac
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlencode, urlsplit
from uuid import UUID

from fastapi import APIRouter, Depends, FastAPI, Form, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from models.settings import get_settings
from ops import memory, registry
from ops.caller import NAMESPACE_WIDE, OWN_SESSION, OWN_USER
from ops.errors import OpError, forbidden, invalid, validation_error
from ops.looms import night_changes
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


router = APIRouter(prefix="/ui", route_class=UiRoute, include_in_schema=False)


def install(app: FastAPI) -> None:
    app.include_router(router)
    app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="ui-static")


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
    return registry.call(op, who.caller, {k: v for k, v in body.items() if v is not None})


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


# --- signing in and out --------------------------------------------------------------------------


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


# --- conversations -------------------------------------------------------------------------------


@router.get("/conversations")
def conversations(request: Request, who: Who) -> HTMLResponse:
    bounded = who.caller.read_scope != NAMESPACE_WIDE
    namespaces = [] if bounded else call(who, "namespaces.list")["namespaces"]
    return page(request, who, "conversations.html", namespaces=namespaces)


@router.post("/record")
def record(who: Acting, namespace: Name, enabled: Annotated[bool, Form()]) -> Response:
    call(who, "conversation.set_logging", namespace=namespace, enabled=enabled)
    return back(who, "/ui/conversations", f"{namespace}: recording {'on' if enabled else 'off'}")


@router.get("/threads")
def threads(request: Request, who: Who, namespace: str, offset: int = 0) -> HTMLResponse:
    answer = call(who, "conversation.threads", namespace=namespace, agent="*", limit=50, offset=offset)
    return page(request, who, "threads.html", namespace=namespace, answer=answer)


@router.get("/thread")
def thread(
    request: Request, who: Who, namespace: str, thread_id: str, cursor: str | None = None
) -> HTMLResponse:
    answer = call(
        who,
        "conversation.get",
        namespace=namespace,
        thread_id=thread_id,
        agent="*",
        include_messages=True,
        limit=200,
        cursor=cursor,
    )
    return page(request, who, "thread.html", namespace=namespace, thread=answer)


@router.post("/compact")
def compact(who: Acting, namespace: Name, thread_id: Name) -> Response:
    run = call(who, "conversation.compact", namespace=namespace, thread_id=thread_id)["run"]
    said = f"compaction run {run['id']}: {run['status']}"
    return back(who, "/ui/thread", said, namespace=namespace, thread_id=thread_id)


@router.post("/delete")
def delete(who: Acting, namespace: Name, thread_id: Name) -> Response:
    call(who, "conversation.delete", namespace=namespace, thread_id=thread_id, confirm_thread_id=thread_id)
    return back(who, "/ui/threads", f"thread {thread_id} deleted", namespace=namespace)


# --- search --------------------------------------------------------------------------------------


@router.get("/search")
def search(
    request: Request,
    who: Who,
    query: str = "",
    namespace: str = "",
    mode: str = "hybrid",
    lexical_weight: str = "",
    user_id: str = "",
) -> HTMLResponse:
    saved = who.caller.read_scope == OWN_USER
    weight = _number(lexical_weight, "lexical_weight")
    form = {
        "query": query,
        "namespace": namespace,
        "mode": mode,
        "lexical_weight": weight,
        "user_id": user_id,
    }
    answer, problem = None, None
    if query.strip():
        body = {"query": query, "search_mode": mode, "lexical_weight": weight, "namespace": namespace or None}
        if saved:
            body |= {"namespace": namespace or "@me", "user_id": user_id or None}
        if not saved and who.caller.namespaces is None and not namespace:
            problem = "Name the namespace to search: this token covers every namespace."
        else:
            answer = call(
                who, "conversation.search_saved_messages" if saved else "conversation.search", **body
            )
    return page(request, who, "search.html", form=form, answer=answer, problem=problem)


def _number(value: str, field: str) -> float | None:
    """A form's number field: blank is none given."""
    if not value.strip():
        return None
    try:
        return float(value)
    except ValueError:
        raise invalid(f"{field} must be a number", field) from None


# --- briefs --------------------------------------------------------------------------------------


@router.get("/briefs")
def briefs(request: Request, who: Who, namespace: str = "") -> HTMLResponse:
    space = chosen_namespace(who, namespace)
    answer = call(who, "session.brief_list", namespace=space, limit=200) if space else None
    return page(request, who, "briefs.html", answer=answer, namespace=space or "")


@router.get("/brief")
def brief(request: Request, who: Who, namespace: str, key: str, revision: int | None = None) -> HTMLResponse:
    latest = call(who, "session.brief_get", namespace=namespace, brief_key=key)
    shown = latest
    if revision is not None:
        shown = call(who, "session.brief_get", namespace=namespace, brief_key=key, revision=revision)
    return page(request, who, "brief.html", namespace=namespace, latest=latest, brief=shown)


# --- the stage ledger and the passes -------------------------------------------------------------


@router.get("/runs")
def runs(
    request: Request, who: Who, stage: str = "", status: str = "", before_id: int | None = None
) -> HTMLResponse:
    answer = call(who, "runs.list", stage=stage or None, status=status or None, before_id=before_id, limit=50)
    passes = call(who, "passes.list")["passes"]
    filters = {"stage": stage, "status": status}
    return page(request, who, "runs.html", answer=answer, passes=passes, filters=filters)


@router.get("/runs/{run_id}")
def run(request: Request, run_id: int, who: Who) -> HTMLResponse:
    return page(request, who, "run.html", run=call(who, "runs.get", run_id=run_id)["run"])


@router.post("/runs/{run_id}/retry")
def retry(run_id: int, who: Acting) -> Response:
    return back(who, f"/ui/runs/{run_id}", call(who, "runs.retry", run_id=run_id)["message"])


@router.post("/passes/run")
def run_pass(who: Acting, name: Name) -> Response:
    answer = call(who, "passes.run", name=name)
    return back(who, "/ui/runs", f"{name}: sent {answer['sent']} runs")


# --- night weaving and looms ---------------------------------------------------------------------


@router.get("/nights")
def nights(request: Request, who: Who) -> HTMLResponse:
    return page(request, who, "nights.html", nights=call(who, "night_weaving.list", limit=30)["nights"])


@router.get("/looms")
def looms(request: Request, who: Who, namespace: str, loom_id: str = "") -> HTMLResponse:
    listed = call(who, "looms.list", namespace=namespace)
    sessions_ = call(who, "looms.sessions", namespace=namespace, loom_id=loom_id or None, limit=50)
    return page(request, who, "looms.html", namespace=namespace, looms=listed, sessions=sessions_)


# --- memory: a loom's threads, its sessions' tapestries, its nights ------------------------------

MEMORY_SHOWN = 200  # memory.inspect's most: the loom's heaviest live threads
SAID_CHARS = 80  # of a thread's text, in what an action says
LoomId = Annotated[str, Form(max_length=64)]


@router.get("/memory")
def memory_page(
    request: Request,
    who: Who,
    namespace: str = "",
    loom_id: str = "",
    query: str = "",
    mode: str = "hybrid",
    cursor: str | None = None,
) -> HTMLResponse:
    space = chosen_namespace(who, namespace)
    form = {"namespace": space or "", "loom_id": loom_id, "query": query, "mode": mode}
    if space is None:
        return page(request, who, "memory.html", form=form)
    where = {"namespace": space, "loom_id": loom_id or None}
    listed = call(who, "memory.inspect", **where, limit=MEMORY_SHOWN)
    found = None
    if query.strip():
        found = call(who, "memory.search", **where, query=query, search_mode=mode, limit=50)
    shown = found["hits"] if found else listed["threads"]
    cited = [i for thread in shown for i in thread["evidenceIds"]]
    evidence = memory.evidence_turns(who.caller, space, listed["loomId"], cited) if cited else []
    nights = None  # the night weavings are read with a token for every namespace only
    if registry.permits("night_weaving.list", who.caller):
        every = call(who, "night_weaving.list", limit=30)["nights"]
        nights = {night["id"]: night for night in every if night["loom_id"] in (None, listed["loomId"])}
    sessions = call(who, "looms.sessions", **where, limit=20, cursor=cursor)
    changes: dict[str, list] = {}  # by session: what each night changed for it
    ids = [UUID(session["id"]) for session in sessions["sessions"]]
    for change in night_changes(who.caller, space, listed["loomId"], ids) if ids else []:
        changes.setdefault(str(change.session_id), []).append(change)
    return page(
        request,
        who,
        "memory.html",
        form=form,
        looms=call(who, "looms.list", namespace=space)["looms"],
        loom_id=listed["loomId"],
        found=found,
        threads=shown,
        live={thread["id"]: thread for thread in listed["threads"]},
        shown_at_most=MEMORY_SHOWN,
        evidence={turn.id: turn for turn in evidence},
        sessions=sessions,
        changes=changes,
        nights=nights,
    )


def _back_to_memory(who: SignedIn, namespace: str, loom_id: str, said: str) -> RedirectResponse:
    return back(who, "/ui/memory", said, namespace=namespace, **({"loom_id": loom_id} if loom_id else {}))


def _named(thread: dict) -> str:
    content = thread["content"]
    return f"“{content[:SAID_CHARS]}{'…' if len(content) > SAID_CHARS else ''}”"


@router.post("/memory/pin")
def pin_memory(who: Acting, namespace: Name, thread: Name, loom_id: LoomId = "") -> Response:
    pinned = call(who, "memory.pin", namespace=namespace, loom_id=loom_id or None, thread=thread)
    return _back_to_memory(who, namespace, loom_id, f"pinned {_named(pinned['thread'])}")


@router.post("/memory/cut")
def cut_memory(who: Acting, namespace: Name, thread: Name, loom_id: LoomId = "") -> Response:
    cut = call(who, "memory.cut", namespace=namespace, loom_id=loom_id or None, thread=thread)
    return _back_to_memory(who, namespace, loom_id, f"cut {_named(cut['thread'])}")


@router.post("/memory/reframe")
def reframe_memory(
    who: Acting,
    namespace: Name,
    thread: Name,
    content: Annotated[str, Form(max_length=memory.CONTENT_MAX)] = "",
    loom_id: LoomId = "",
) -> Response:
    body = {"namespace": namespace, "loom_id": loom_id or None, "thread": thread, "content": content}
    answer = call(who, "memory.reframe", **body)
    said = f"reframed as {_named(answer['thread'])}"
    if not answer["reframed"]:
        said = "not reframed: the new text reads as high sensitivity, so it was not stored"
    return _back_to_memory(who, namespace, loom_id, said)


# --- health --------------------------------------------------------------------------------------


@router.get("/health")
def health(request: Request, who: Who) -> HTMLResponse:
    return page(request, who, "health.html", health=call(who, "health.get"))
