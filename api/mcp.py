"""Loom over MCP, with the official ``mcp`` package: ``loom mcp`` (stdio) and ``/mcp`` on the API
(streamable HTTP, bearer auth like every op).

The tools are the document's: ``loom_search`` (the unified search: its conversation, memory and
briefs sections; the briefs section names them and never loads one), the memory tools
(``loom_memory_search``, ``loom_memory_set``, ``loom_memory_pin``, ``loom_context_pack``,
``loom_working_memory_get`` and ``loom_working_memory_set``), and ``loom_brief_get``, ``loom_brief_save`` and
``loom_brief_list``; ``loom_conversation_append`` only in the ``all`` toolset (``/mcp?toolset=all``,
``loom mcp --toolset all``), since nothing in the core listing should prompt a model to log turns.
Each tool is a thin call of the ops (``ops.registry.call``) as the request's caller; a write a
viewer's token may not make is a tool error saying so.

An MCP session has an implicit run: the ``run_id`` its appends carry and the ``session_id`` its
brief saves default to. It closes after ``LOOM_MCP_SESSION_RUN_IDLE_SECONDS`` without a call: the
session's next call starts a new one. A session is the handshake protocol's (``mcp-session-id``);
the stateless protocol (2026-07-28) has none, so there one bearer token's calls are one session."""

import hashlib
import re
import threading
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, Literal
from urllib.parse import parse_qs
from uuid import uuid4

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import JSONResponse

from models.settings import get_settings
from ops.caller import Caller, authenticate
from ops.errors import OpError
from ops.registry import call_async

CORE, ALL = "core", "all"
TOOLSETS = (CORE, ALL)
STDIO = "stdio"
INSTRUCTIONS = (
    "Loom keeps this team's conversations, memories and session briefs. Use loom_search to find "
    "what was said or remembered; remember a durable fact with loom_memory_set, and pin one that "
    "must stay in view (by its id) with loom_memory_pin; keep your own "
    "'where was I' note with loom_working_memory_set. Load a brief with loom_brief_get only when "
    "the person asks to resume a line of work, and save one with loom_brief_save at a milestone."
)
HIT_KEYS = ("namespace", "thread_id", "msg_id", "role", "ts", "score", "excerpt")
MEMORY_KEYS = ("id", "content", "kind", "subjects", "score")
BRIEF_KEYS = ("brief_key", "project", "branch", "updated_at")


def _words(text: str) -> set[str]:
    return {word for word in re.split(r"[^0-9a-z]+", text.casefold()) if len(word) >= 3}


def _names(query: str, brief: dict) -> bool:
    """The query names the brief: a word of its key, project or branch (three letters or more)."""
    named = " ".join(brief.get(key) or "" for key in ("brief_key", "project", "branch"))
    return bool(_words(query) & _words(named))


def _given(body: dict) -> dict:
    return {name: value for name, value in body.items() if value is not None}


class ImplicitRuns:
    """Each MCP session's implicit run id, renewed after ``idle`` seconds without a call. Sessions
    idle past that are forgotten, so the table holds only live ones."""

    def __init__(self) -> None:
        self._runs: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def run_of(self, session: str, idle: float, now: float | None = None) -> str:
        now = time.monotonic() if now is None else now
        with self._lock:
            for key, (_, last) in list(self._runs.items()):
                if now - last > idle:
                    del self._runs[key]
            run = self._runs[session][0] if session in self._runs else f"mcp-{uuid4().hex}"
            self._runs[session] = (run, now)
            return run


def build(toolset: str = CORE, caller: Caller | None = None) -> MCPServer:
    """The MCP server of a toolset. ``caller`` serves stdio (one local caller); without it each
    request is authenticated by its bearer token."""
    server = MCPServer("loom", instructions=INSTRUCTIONS, version="0.1.0")
    runs = ImplicitRuns()

    def session_of(ctx: Context) -> str:
        """The MCP session a call belongs to: its ``mcp-session-id`` (the handshake protocol's
        sessions), else its credential (the stateless protocol has no session: one token's calls
        are one session until they pause), else stdio's one session."""
        headers = ctx.headers or {}
        if session := headers.get("mcp-session-id"):
            return f"session:{session}"
        if authorization := headers.get("authorization"):
            return f"token:{hashlib.sha256(authorization.encode()).hexdigest()[:32]}"
        return STDIO

    def run_of(ctx: Context) -> str:
        return runs.run_of(session_of(ctx), get_settings().mcp_session_run_idle_seconds)

    async def op(ctx: Context, name: str, body: dict) -> dict:
        def request() -> tuple[Caller, dict]:
            return caller or authenticate((ctx.headers or {}).get("authorization")), _given(body)

        try:
            answer = await call_async(name, request)
        except OpError as exc:  # the model reads why, as it would an HTTP client
            raise ToolError(f"{exc.status}: {exc.reason}") from exc
        assert isinstance(answer, dict)  # no tool calls the one op that streams (erasure.export)
        return answer

    @server.tool()
    async def loom_search(
        query: str,
        ctx: Context,
        namespace: str | None = None,
        thread_id: str | None = None,
        limit: int = 10,
    ) -> dict[str, Any]:
        """Search everything Loom keeps, in three sections. conversation: turns said in the
        namespace's threads, best first (hybrid BM25 and vector search; each with its thread_id
        and an excerpt). memory: remembered facts and episodes (id, content, kind). briefs: the
        names and dates of session briefs whose project matches, never their contents (load one
        with loom_brief_get only when the person asks to resume it)."""
        body = {"namespace": namespace, "query": query, "limit": limit}
        said = await op(ctx, "conversation.search", body | {"thread_id": thread_id})
        remembered = await op(ctx, "memory.search", body)
        briefs = await op(ctx, "session.brief_list", {"namespace": namespace, "limit": 50})
        return {
            "conversation": [{key: hit.get(key) for key in HIT_KEYS} for hit in said["hits"]],
            "memory": [{key: hit.get(key) for key in MEMORY_KEYS} for hit in remembered["hits"]],
            "briefs": [
                {key: brief.get(key) for key in BRIEF_KEYS}
                for brief in briefs["briefs"]
                if _names(query, brief)
            ][:limit],
        }

    @server.tool()
    async def loom_memory_search(
        query: str,
        ctx: Context,
        kinds: list[Literal["Semantic", "Episodic", "Procedural"]] | None = None,
        limit: int = 10,
        namespace: str | None = None,
    ) -> list[dict[str, Any]]:
        """Search the remembered facts (Semantic), episodes of past work (Episodic) and how-tos
        (Procedural) of the namespace's loom, best first. Call it before answering from memory:
        each hit has id, content, kind, subjects and score."""
        body = {"namespace": namespace, "query": query, "kinds": kinds, "limit": limit}
        return [
            {key: hit.get(key) for key in MEMORY_KEYS}
            for hit in (await op(ctx, "memory.search", body))["hits"]
        ]

    @server.tool()
    async def loom_memory_set(
        content: str,
        ctx: Context,
        kind: Literal["Semantic", "Episodic", "Procedural"] = "Semantic",
        subjects: list[str] | None = None,
        namespace: str | None = None,
    ) -> dict[str, Any]:
        """Remember one durable fact (Semantic), something that happened (Episodic) or how to do a
        thing (Procedural), as one self-contained sentence naming who or what it is about. Needs a
        writer's token. Answers stored (false, with the reason, when it reads as a secret)."""
        body = {"namespace": namespace, "content": content, "kind": kind, "subjects": subjects}
        answer = await op(ctx, "memory.set", body)
        thread = answer.get("thread") or {}
        return {"stored": answer["stored"], "reason": answer.get("reason"), "id": thread.get("id")}

    @server.tool()
    async def loom_memory_pin(thread: str, ctx: Context, namespace: str | None = None) -> dict[str, Any]:
        """Pin a remembered thread by its id (as a tapestry line, a search hit or a suggestion
        names it): it comes first in every tapestry from now, and this session keeps it through
        compaction. Needs a writer's token. Answers the thread's id, content and pinned."""
        answer = await op(ctx, "memory.pin", {"namespace": namespace, "thread": thread})
        return {key: answer["thread"][key] for key in ("id", "content", "pinned")}

    @server.tool()
    async def loom_context_pack(
        thread_id: str,
        ctx: Context,
        user_id: str | None = None,
        project: str = "",
        branch: str = "",
        namespace: str | None = None,
    ) -> dict[str, Any]:
        """Your context for this conversation, at its start: the tapestry (the memories chosen for
        this thread and user, as text), memories another agent gave you, and the user's working
        memory of the project and branch. Call it once when a conversation starts or resumes."""
        body = {
            "namespace": namespace,
            "thread_id": thread_id,
            "run_id": run_of(ctx),
            "user_id": user_id,
            "project": project,
            "branch": branch,
        }
        pack = await op(ctx, "context.pack", body)
        return {
            "tapestry": pack["tapestry"],
            "gifts": [{key: gift.get(key) for key in MEMORY_KEYS} for gift in pack["gifts"]],
            "working_memory": pack["working_memory"],
        }

    @server.tool()
    async def loom_working_memory_get(
        ctx: Context,
        project: str = "",
        branch: str = "",
        user_id: str | None = None,
        namespace: str | None = None,
    ) -> dict[str, Any]:
        """Your "where was I" note for a project and branch: content, revision and when it was
        written. A note that held a secret is withheld (blank content, withheld true)."""
        body = {"namespace": namespace, "project": project, "branch": branch, "user_id": user_id}
        return await op(ctx, "working_memory.get", body)

    @server.tool()
    async def loom_working_memory_set(
        content: str,
        ctx: Context,
        project: str = "",
        branch: str = "",
        user_id: str | None = None,
        namespace: str | None = None,
    ) -> dict[str, Any]:
        """Replace your "where was I" note for a project and branch (at most 4,000 characters):
        what you are doing, what is next, what to watch. Write it when you pause or hand over;
        every revision is kept. Needs a writer's token."""
        body = {
            "namespace": namespace,
            "project": project,
            "branch": branch,
            "user_id": user_id,
            "content": content,
            "session_id": run_of(ctx),
        }
        return await op(ctx, "working_memory.set", body)

    @server.tool()
    async def loom_brief_get(
        ctx: Context,
        brief_key: str | None = None,
        from_session: str | None = None,
        project: str | None = None,
        revision: int | None = None,
        full: bool = False,
        namespace: str | None = None,
    ) -> str:
        """A session brief as Markdown: by brief_key, else the newest one a session wrote, else the
        newest of a project. full appends the client's last compaction summary."""
        body = {
            "namespace": namespace,
            "brief_key": brief_key,
            "from_session": from_session,
            "project": project,
            "revision": revision,
            "full": full,
        }
        return (await op(ctx, "session.brief_get", body))["markdown"]

    @server.tool()
    async def loom_brief_save(
        ctx: Context,
        brief_key: str = "",
        project: str | None = None,
        branch: str | None = None,
        session_id: str | None = None,
        sections: dict[str, str | list[str]] | None = None,
        events: list[dict[str, Any]] | None = None,
        event_cursor: str | None = None,
        if_revision: int | None = None,
        namespace: str | None = None,
    ) -> dict[str, Any]:
        """Revise (or start) a session brief from sections you wrote (goal, status, decisions,
        dead_ends, done, open_questions, next_steps, key_files, errors, constraints, pointers)
        and/or events ({kind, text}). An empty brief_key is auto/<project>/<branch>."""
        body = {
            "namespace": namespace,
            "brief_key": brief_key,
            "project": project,
            "branch": branch,
            "session_id": session_id or run_of(ctx),
            "sections": sections,
            "events": events,
            "event_cursor": event_cursor,
            "if_revision": if_revision,
        }
        return await op(ctx, "session.brief_save", body)

    @server.tool()
    async def loom_brief_list(
        ctx: Context,
        project: str | None = None,
        mine_only: bool = False,
        limit: int = 20,
        namespace: str | None = None,
    ) -> list[dict[str, Any]]:
        """The namespace's session briefs, newest first, one line each."""
        body = {"namespace": namespace, "project": project, "mine_only": mine_only, "limit": limit}
        return (await op(ctx, "session.brief_list", body))["briefs"]

    if toolset == ALL:

        @server.tool()
        async def loom_conversation_append(
            thread_id: str,
            role: Literal["user", "assistant", "system", "tool"],
            content: str,
            ctx: Context,
            msg_id: str | None = None,
            user_id: str | None = None,
            namespace: str | None = None,
        ) -> dict[str, Any]:
            """Log one turn of this conversation to Loom's transcript (with this MCP session's run)."""
            body = {
                "namespace": namespace,
                "thread_id": thread_id,
                "role": role,
                "content": content,
                "msg_id": msg_id,
                "user_id": user_id,
                "run_id": run_of(ctx),
            }
            return await op(ctx, "conversation.append", body)

    return server


NO_HOST_CHECK = TransportSecuritySettings(enable_dns_rebinding_protection=False)


class HttpEndpoint:
    """``/mcp`` on the API: the bearer token checked before any MCP exchange (401 otherwise), then
    the toolset's streamable HTTP session manager (``?toolset=all`` for the full one)."""

    def __init__(self) -> None:
        self.servers = {toolset: build(toolset) for toolset in TOOLSETS}
        self._apps: dict[str, StreamableHTTPASGIApp] = {}

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The session managers' task groups, for the API's lifespan: new ones each time (a
        session manager runs once), so an app can be started again."""
        async with AsyncExitStack() as stack:
            apps = {}
            for name, server in self.servers.items():
                # Makes the server's session manager. The API checks every request's Host
                # (``api.hosts``), /mcp's included: the SDK's own loopback-only check would
                # refuse the names an operator lists.
                server.streamable_http_app(transport_security=NO_HOST_CHECK)
                await stack.enter_async_context(server.session_manager.run())
                apps[name] = StreamableHTTPASGIApp(server.session_manager)
            self._apps = apps
            try:
                yield
            finally:
                self._apps = {}

    async def __call__(self, scope, receive, send) -> None:
        headers = {key.decode().lower(): value.decode() for key, value in scope.get("headers", [])}
        try:
            await anyio.to_thread.run_sync(authenticate, headers.get("authorization"))
        except OpError as exc:
            await JSONResponse(exc.as_dict(), status_code=exc.status)(scope, receive, send)
            return
        query = parse_qs(scope.get("query_string", b"").decode())
        app = self._apps.get(ALL if query.get("toolset") == [ALL] else CORE)
        if app is None:  # outside the API's lifespan
            await JSONResponse({"error": "MCP is not running"}, status_code=503)(scope, receive, send)
            return
        await app(scope, receive, send)
