"""Memory's pages: a namespace's looms and their sessions, and a loom's threads (pin, cut, reframe),
its sessions' tapestries and the nights that changed them."""

from typing import Annotated
from uuid import UUID

from fastapi import Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ops import memory, registry
from ops.looms import night_changes
from ui.routing import (
    Acting,
    Name,
    SignedIn,
    Who,
    back,
    call,
    chosen_namespace,
    namespace_choices,
    page,
    ui_router,
)

router = ui_router()


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
    loom_of: str = "",  # the namespace the form's loom_id was chosen in
    query: str = "",
    mode: str = "hybrid",
    cursor: str | None = None,
) -> HTMLResponse:
    space = chosen_namespace(who, namespace)
    form = {"namespace": space or "", "loom_id": loom_id, "query": query, "mode": mode}
    namespaces = namespace_choices(who, space)
    if space is None:
        return page(request, who, "memory.html", form=form, namespaces=namespaces)
    if loom_of not in ("", space):
        # The form's picker changed the namespace; the loom it carried is the last one's.
        form["loom_id"] = loom_id = ""
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
        namespaces=namespaces,
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
