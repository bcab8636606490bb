"""The dashboard's routes: pages are GETs rendering Jinja2 templates from ops' answers; actions are
POSTs of forms carrying the session's CSRF token, each one op, then a redirect back (so a reload
never repeats an action). Every op goes through ``ops.registry.call`` as the signed-in token:
the same role and namespace checks as HTTP, and ``registry.permits`` decides which buttons show."""

from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlencode, urlsplit

from fastapi import APIRouter, Depends, FastAPI, Form, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from ops import registry
from ops.caller import OWN_SESSION, OWN_USER
from ops.errors import OpError, forbidden, invalid
from ui import render, sessions
from ui.sessions import COOKIE, SignedIn

HERE = Path(__file__).parent
TEMPLATES = Jinja2Templates(directory=HERE / "templates")
TEMPLATES.env.filters.update(render.FILTERS)


class SignInRequired(Exception):
    pass


class UiRoute(APIRoute):
    """Renders an op's refusal as a page with its status (403, 404, 422 …), and sends a caller
    with no session to the sign-in page."""

    def get_route_handler(self):
        handler = super().get_route_handler()

        async def answer(request: Request) -> Response:
            try:
                return await handler(request)
            except SignInRequired:
                target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                return RedirectResponse(f"/ui/login?next={quote(target)}", status_code=303)
            except RequestValidationError as exc:  # a path or query value of the wrong type
                first = exc.errors()[0]
                error = invalid(f"{first['loc'][-1]}: {first['msg']}", str(first["loc"][-1]))
                who = getattr(request.state, "who", None) or sessions.current(request.cookies.get(COOKIE))
                if who is None:
                    return RedirectResponse("/ui/login", status_code=303)
                return page(request, who, "error.html", status=422, error=error)
            except OpError as exc:
                who = getattr(request.state, "who", None)
                if who is None or exc.status == 401:
                    return RedirectResponse("/ui/login", status_code=303)
                return page(request, who, "error.html", status=exc.status, error=exc)

        return answer


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
    """A form posted from another site is refused, whatever it carries (the CSRF token aside)."""
    origin = request.headers.get("origin") or request.headers.get("referer")
    if origin and urlsplit(origin).netloc != request.url.netloc:
        raise forbidden("a form from another origin")


def acting(
    request: Request, who: Annotated[SignedIn, Depends(signed_in)], csrf: Annotated[str, Form()] = ""
) -> SignedIn:
    same_origin(request)
    sessions.check_csrf(who, csrf)
    return who


Who = Annotated[SignedIn, Depends(signed_in)]
Acting = Annotated[SignedIn, Depends(acting)]


def call(who: SignedIn, op: str, **body: Any) -> dict:
    return registry.call(op, who.caller, {k: v for k, v in body.items() if v is not None})


def page(request: Request, who: SignedIn, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    caller = who.caller
    return TEMPLATES.TemplateResponse(
        request,
        template,
        {
            "caller": caller,
            "csrf": who.csrf,
            "can": lambda op: registry.permits(op, caller),
            "user_bounded": caller.read_scope in (OWN_USER, OWN_SESSION),
            "all_namespaces": caller.namespaces is None,
            "said": request.query_params.get("said"),
            **context,
        },
        status_code=status,
    )


def back(path: str, said: str) -> RedirectResponse:
    return RedirectResponse(f"{path}?{urlencode({'said': said})}", status_code=303)


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
        session_id, _ = sessions.sign_in(token)
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
        secure=request.url.scheme == "https",
    )
    return response


@router.post("/logout")
def logout(request: Request, who: Acting) -> Response:
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
    namespaces = [] if who.caller.read_scope != "namespace" else call(who, "namespaces.list")["namespaces"]
    return page(request, who, "conversations.html", namespaces=namespaces)


@router.post("/conversations/{namespace}/record")
def record(namespace: str, who: Acting, enabled: Annotated[bool, Form()]) -> Response:
    call(who, "conversation.set_logging", namespace=namespace, enabled=enabled)
    return back("/ui/conversations", f"{namespace}: recording {'on' if enabled else 'off'}")


@router.get("/conversations/{namespace}")
def threads(request: Request, namespace: str, who: Who, offset: int = 0) -> HTMLResponse:
    answer = call(who, "conversation.threads", namespace=namespace, agent="*", limit=50, offset=offset)
    return page(request, who, "threads.html", namespace=namespace, answer=answer)


@router.get("/conversations/{namespace}/threads/{thread_id:path}")
def thread(
    request: Request, namespace: str, thread_id: str, who: Who, cursor: str | None = None
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


@router.post("/conversations/{namespace}/threads/{thread_id:path}/compact")
def compact(namespace: str, thread_id: str, who: Acting) -> Response:
    answer = call(who, "conversation.compact", namespace=namespace, thread_id=thread_id)
    said = f"compaction run {answer['run']['id']}: {answer['run']['status']}"
    return back(f"/ui/conversations/{quote(namespace)}/threads/{quote(thread_id)}", said)


@router.post("/conversations/{namespace}/threads/{thread_id:path}/delete")
def delete(namespace: str, thread_id: str, who: Acting) -> Response:
    call(who, "conversation.delete", namespace=namespace, thread_id=thread_id, confirm_thread_id=thread_id)
    return back(f"/ui/conversations/{quote(namespace)}", f"thread {thread_id} deleted")


# --- search --------------------------------------------------------------------------------------


@router.get("/search")
def search(
    request: Request,
    who: Who,
    query: str = "",
    namespace: str | None = None,
    mode: str = "hybrid",
    lexical_weight: str = "",
    user_id: str | None = None,
) -> HTMLResponse:
    answer = None
    weight = _number(lexical_weight, "lexical_weight")
    if query.strip():
        op = (
            "conversation.search_saved_messages"
            if who.caller.read_scope == OWN_USER
            else "conversation.search"
        )
        body = {
            "query": query,
            "namespace": namespace or None,
            "search_mode": mode,
            "lexical_weight": weight,
        }
        if op == "conversation.search_saved_messages":
            body |= {"namespace": namespace or "@me", "user_id": user_id or None}
        answer = call(who, op, **body)
    form = {
        "query": query,
        "namespace": namespace or "",
        "mode": mode,
        "lexical_weight": weight,
        "user_id": user_id or "",
    }
    return page(request, who, "search.html", form=form, answer=answer)


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
def briefs(request: Request, who: Who, namespace: str | None = None) -> HTMLResponse:
    answer = call(who, "session.brief_list", namespace=namespace or None, limit=200)
    return page(request, who, "briefs.html", answer=answer, namespace=namespace or "")


@router.get("/briefs/{namespace}/{brief_key:path}")
def brief(
    request: Request, namespace: str, brief_key: str, who: Who, revision: int | None = None
) -> HTMLResponse:
    latest = call(who, "session.brief_get", namespace=namespace, brief_key=brief_key)
    shown = (
        latest
        if revision is None
        else call(who, "session.brief_get", namespace=namespace, brief_key=brief_key, revision=revision)
    )
    return page(request, who, "brief.html", namespace=namespace, latest=latest, brief=shown)


# --- the stage ledger and the passes -------------------------------------------------------------


@router.get("/runs")
def runs(
    request: Request,
    who: Who,
    stage: str | None = None,
    status: str | None = None,
    before_id: int | None = None,
) -> HTMLResponse:
    answer = call(who, "runs.list", stage=stage or None, status=status or None, before_id=before_id, limit=50)
    passes = call(who, "passes.list")["passes"]
    filters = {"stage": stage or "", "status": status or ""}
    return page(request, who, "runs.html", answer=answer, passes=passes, filters=filters)


@router.get("/runs/{run_id}")
def run(request: Request, run_id: int, who: Who) -> HTMLResponse:
    return page(request, who, "run.html", run=call(who, "runs.get", run_id=run_id)["run"])


@router.post("/runs/{run_id}/retry")
def retry(run_id: int, who: Acting) -> Response:
    return back(f"/ui/runs/{run_id}", call(who, "runs.retry", run_id=run_id)["message"])


@router.post("/passes/{name}/run")
def run_pass(name: str, who: Acting) -> Response:
    answer = call(who, "passes.run", name=name)
    return back("/ui/runs", f"{name}: sent {answer['sent']} runs")


# --- night weaving and looms ---------------------------------------------------------------------


@router.get("/nights")
def nights(request: Request, who: Who) -> HTMLResponse:
    return page(request, who, "nights.html", nights=call(who, "night_weaving.list", limit=30)["nights"])


@router.get("/looms/{namespace}")
def looms(request: Request, namespace: str, who: Who, loom_id: str | None = None) -> HTMLResponse:
    listed = call(who, "looms.list", namespace=namespace)
    sessions_ = call(who, "looms.sessions", namespace=namespace, loom_id=loom_id or None, limit=50)
    return page(request, who, "looms.html", namespace=namespace, looms=listed, sessions=sessions_)


# --- health --------------------------------------------------------------------------------------


@router.get("/health")
def health(request: Request, who: Who) -> HTMLResponse:
    return page(request, who, "health.html", health=call(who, "health.get"))
