"""The conversations' pages: namespaces and their recording, threads, a thread (compact, delete),
search, and briefs."""

from typing import Annotated

from fastapi import Form, Request
from fastapi.responses import HTMLResponse, Response

from ops.caller import NAMESPACE_WIDE, OWN_USER
from ops.errors import invalid
from ui.routing import Acting, Name, Who, back, call, chosen_namespace, namespace_choices, page, ui_router

router = ui_router()


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
    namespace = chosen_namespace(who, namespace) or ""
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
    namespaces = namespace_choices(who, namespace)
    return page(request, who, "search.html", form=form, answer=answer, problem=problem, namespaces=namespaces)


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
    namespaces = namespace_choices(who, space)
    return page(request, who, "briefs.html", answer=answer, namespace=space or "", namespaces=namespaces)


@router.get("/brief")
def brief(request: Request, who: Who, namespace: str, key: str, revision: int | None = None) -> HTMLResponse:
    latest = call(who, "session.brief_get", namespace=namespace, brief_key=key)
    shown = latest
    if revision is not None:
        shown = call(who, "session.brief_get", namespace=namespace, brief_key=key, revision=revision)
    return page(request, who, "brief.html", namespace=namespace, latest=latest, brief=shown)
