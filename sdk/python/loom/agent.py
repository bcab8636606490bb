"""An agent of a Loom namespace, and the (user, session) scope it talks in.

Each method is written once, as a plan: a generator that yields the ops it needs (``(op, body)``)
and is sent their answers (or thrown their errors). ``Agent`` drives plans over an async client,
so its methods return awaitables; ``SyncAgent`` drives them over a sync one and returns the values.
"""

import os
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from loom import results
from loom._transport import AsyncTransport, SyncTransport
from loom.errors import LoomError, NotFound

Plan = Generator[tuple[str, dict], dict, Any]
DEFAULT_URL = "http://127.0.0.1:7777"
MESSAGES_MAX = 500  # memory.set_from_messages takes at most this many at once


EVERY_AGENT = "*"  # conversation.search's agent for every agent's turns


def _given(body: dict) -> dict:
    return {name: value for name, value in body.items() if value is not None}


def _one(op: str, body: dict) -> Plan:
    return (yield (op, body))


def _typed(op: str, body: dict, convert: Callable[[dict], Any]) -> Plan:
    return convert((yield (op, body)))


def _or_none(plan: Plan) -> Plan:
    """The plan's value, or None where Loom has no such thing (404)."""
    try:
        return (yield from plan)
    except NotFound:
        return None


def _iso(moment: datetime | str | None) -> str | None:
    return moment.isoformat() if isinstance(moment, datetime) else moment


@dataclass
class Resumed:
    """What ``Session.resume`` brings back: the agent's context for the session (its tapestry, the
    LoomSession, gifts and proposals offered once, the user's working memory), the transcript's
    tail (oldest first), and the memory threads the query finds."""

    tapestry: str | None
    session: dict
    gifts: list[dict] = field(default_factory=list)
    proposals: list[dict] = field(default_factory=list)
    tail: list[dict] = field(default_factory=list)
    memories: list[dict] = field(default_factory=list)
    working_memory: dict | None = None


class _Agent:
    def __init__(
        self,
        namespace: str,
        deployment: str,
        agent_name: str,
        base_url: str | None = None,
        token: str | None = None,
        flush_every: int = 20,
        max_retries: int = 4,
        timeout: float = 60.0,
    ) -> None:
        if not 1 <= flush_every <= MESSAGES_MAX:
            raise ValueError(f"flush_every must be 1 to {MESSAGES_MAX}")
        self.namespace = namespace
        self.deployment = deployment
        self.agent_name = agent_name
        self.base_url = base_url or os.environ.get("LOOM_URL") or DEFAULT_URL
        self.token = token or os.environ.get("LOOM_TOKEN")
        self.flush_every = flush_every
        self.briefs = Briefs(self)
        self.memory = Memories(self)
        self.context = Context(self)
        self.working_memory = WorkingMemories(self)
        self._max_retries, self._timeout = max_retries, timeout

    def scoped(self, body: dict) -> dict:
        """A body in this agent's namespace, as this agent."""
        return _given({"namespace": self.namespace, "agent": self.agent_name, **body})

    def session(self, thread_id: str, user_id: str | None = None, run_id: str | None = None) -> "Session":
        return Session(self, thread_id, user_id, run_id)

    def call(self, op: str, **body):
        """Any op of the HTTP API in this agent's namespace, as this agent."""
        return self._run(_one(op, self.scoped(body)))

    def search(self, query: str, **filters):
        """``conversation.search``: what was said in the namespace's threads, by any agent, best
        first (hybrid by default; ``search_mode``, ``thread_id``, ``role``, ``limit`` and the op's
        other filters; ``agent=<name>`` for only what that agent logged). A
        ``results.SearchResult``::

            found = await bot.search("where did the invoices go", limit=5)
            for hit in found.hits:
                print(hit.thread_id, hit.score, hit.excerpt)
        """
        body = self.scoped({"query": query, "agent": EVERY_AGENT, **filters})
        return self._run(_typed("conversation.search", body, results.SearchResult.from_answer))

    def _run(self, plan: Plan):
        raise NotImplementedError


class Agent(_Agent):
    """The async client: ``async with Agent("dev", "local", "support-bot") as bot: ...``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._transport = AsyncTransport(self.base_url, self.token, self._max_retries, self._timeout)

    async def _run(self, plan: Plan):
        try:
            request = next(plan)
            while True:
                try:
                    answer = await self._transport.call(*request)
                except LoomError as exc:
                    request = plan.throw(exc)
                else:
                    request = plan.send(answer)
        except StopIteration as done:
            return done.value

    async def close(self) -> None:
        await self._transport.close()

    async def __aenter__(self) -> "Agent":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()


class SyncAgent(_Agent):
    """The sync client: ``with SyncAgent("dev", "local", "support-bot") as bot: ...``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._transport = SyncTransport(self.base_url, self.token, self._max_retries, self._timeout)

    def _run(self, plan: Plan):
        try:
            request = next(plan)
            while True:
                try:
                    answer = self._transport.call(*request)
                except LoomError as exc:
                    request = plan.throw(exc)
                else:
                    request = plan.send(answer)
        except StopIteration as done:
            return done.value

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> "SyncAgent":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Session:
    """One (user, session) scope: a conversation thread, the user it is with, and the run.

    ``append`` writes turns to the transcript and buffers them; every ``flush_every`` turns (and
    on ``close``) the buffer goes to ``memory.set_from_messages(defer=true)``, whether or not the
    namespace records. ``transcript_stored`` says whether the last turn was recorded."""

    def __init__(self, agent: _Agent, thread_id: str, user_id: str | None, run_id: str | None) -> None:
        self.agent = agent
        self.thread_id = thread_id
        self.user_id = user_id
        self.run_id = run_id
        self.transcript_stored: bool | None = None
        self._buffer: list[dict] = []

    def append(self, *turns: dict):
        """Each turn ``{"role": …, "content": …}`` (optional ``msg_id``, ``ts``, ``metadata``, …);
        the append answers."""
        return self.agent._run(self._append(turns))

    def flush(self):
        """Send the buffered turns to extraction now; the run's answer (None with none buffered)."""
        return self.agent._run(self._flush())

    def close(self):
        """Flush what is buffered (the session's last turns reach extraction)."""
        return self.agent._run(self._flush())

    def resume(self, query: str | None = None, tail: int = 20):
        """``context.pack`` for this scope, the transcript's last ``tail`` turns, and the memory
        threads ``query`` finds: a ``Resumed``."""
        return self.agent._run(self._resume(query, tail))

    def _append(self, turns: tuple[dict, ...]) -> Plan:
        answers = []
        for turn in turns:
            metadata = {"deployment": self.agent.deployment, **turn.get("metadata", {})}
            body = {
                "thread_id": self.thread_id,
                "user_id": self.user_id,
                "run_id": self.run_id,
                **turn,
                "metadata": metadata,
            }
            answer = yield ("conversation.append", self.agent.scoped(body))
            answers.append(answer)
            self.transcript_stored = answer["stored"] or answer["reason"] == "duplicate"
            said = {"role": turn["role"], "content": turn["content"], "msg_id": answer["msg_id"]}
            self._buffer.append(_given({**said, "ts": turn.get("ts"), "user_id": body.get("user_id")}))
            if len(self._buffer) >= self.agent.flush_every:
                yield from self._flush()
        return answers

    def _flush(self) -> Plan:
        if not self._buffer:
            return None
        messages, self._buffer = self._buffer, []
        body = {"thread_id": self.thread_id, "run_id": self.run_id, "messages": messages, "defer": True}
        try:
            return (yield ("memory.set_from_messages", self.agent.scoped(body)))
        except LoomError:
            self._buffer = messages + self._buffer  # kept for the next flush
            raise

    def _resume(self, query: str | None, tail: int) -> Plan:
        scope = {"thread_id": self.thread_id, "run_id": self.run_id, "user_id": self.user_id}
        pack = yield ("context.pack", self.agent.scoped(scope))
        read = {"thread_id": self.thread_id, "include_messages": True, "order": "desc", "limit": tail}
        try:
            newest = (yield ("conversation.get", self.agent.scoped(read)))["messages"] or []
        except NotFound:  # nothing recorded in this thread
            newest = []
        memories = []
        if query:
            memories = (yield ("memory.search", self.agent.scoped({"query": query})))["hits"]
        return Resumed(
            tapestry=pack["tapestry"],
            session=pack["session"],
            gifts=pack["gifts"],
            proposals=pack["proposals"],
            tail=list(reversed(newest)),
            memories=memories,
            working_memory=pack.get("working_memory"),
        )


class Memories:
    """The namespace's loom (``memory.*``), as this agent: ``bot.memory``."""

    def __init__(self, agent: _Agent) -> None:
        self.agent = agent

    def set(self, content: str, kind: str = "Semantic", **fields):
        """Remember one fact (``Semantic``), episode (``Episodic``) or how-to (``Procedural``); a
        ``results.Remembered`` (``stored`` false when it reads as a secret)::

            kept = await bot.memory.set("Ana prefers invoices in EUR", subjects=["ana"])
        """
        body = self.agent.scoped({"content": content, "kind": kind, **fields})
        return self.agent._run(_typed("memory.set", body, results.Remembered.from_answer))

    def search(self, query: str, kinds: list[str] | None = None, limit: int = 10, **fields):
        """The memories ``query`` finds, best first: a list of ``results.Memory``::

        for memory in await bot.memory.search("invoice currency", kinds=["Semantic"]):
            print(memory.content, memory.score)
        """
        body = self.agent.scoped({"query": query, "kinds": kinds, "limit": limit, **fields})
        return self.agent._run(
            _typed("memory.search", body, lambda a: [results.Memory.from_answer(h) for h in a["hits"]])
        )

    def reflect(self, question: str, limit: int = 8, **fields):
        """Reflect on ``question``: a ``results.Reflection`` (the answer, the memories it cites, the
        knots and the tensions among them); ``thread_id`` (and ``run_id``) records them in that
        session::

            reflection = await bot.memory.reflect("when does Ana deploy?", thread_id="thread-42")
            for tension in reflection.tensions:
                print(tension["type"], tension["newer"])
        """
        body = self.agent.scoped({"question": question, "limit": limit, **fields})
        return self.agent._run(_typed("memory.reflect", body, results.Reflection.from_answer))

    def recall(
        self,
        query: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        limit: int = 20,
        **fields,
    ):
        """The messages extraction read, by their words or, without ``query``, by time: a list of
        ``results.Recalled``::

            said = await bot.memory.recall("ledger", since=datetime(2026, 3, 1, tzinfo=UTC))
        """
        body = self.agent.scoped(
            {"query": query, "since": _iso(since), "until": _iso(until), "limit": limit, **fields}
        )
        return self.agent._run(
            _typed("memory.recall", body, lambda a: [results.Recalled.from_answer(h) for h in a["hits"]])
        )


class Context:
    """``bot.context``: the agent's context for a conversation."""

    def __init__(self, agent: _Agent) -> None:
        self.agent = agent

    def pack(self, thread_id: str, user_id: str | None = None, project: str = "", branch: str = "", **fields):
        """``context.pack`` for a conversation (and a user): a ``results.Pack`` (the tapestry, gifts,
        proposals and the user's working memory of the project and branch)::

            pack = await bot.context.pack("thread-42", user_id="u1", project="billing")
            prompt = (pack.tapestry or "") + (pack.working_memory.content if pack.working_memory else "")
        """
        body = self.agent.scoped(
            {"thread_id": thread_id, "user_id": user_id, "project": project, "branch": branch, **fields}
        )
        return self.agent._run(_typed("context.pack", body, results.Pack.from_answer))


class WorkingMemories:
    """``bot.working_memory``: the "where was I" block of a user, project and branch."""

    def __init__(self, agent: _Agent) -> None:
        self.agent = agent

    def get(self, project: str = "", branch: str = "", user_id: str | None = None, **fields):
        """The block as a ``results.WorkingMemory``, or None when there is none::

        note = await bot.working_memory.get(project="billing", branch="ledger-move")
        """
        body = self.agent.scoped({"project": project, "branch": branch, "user_id": user_id, **fields})
        return self.agent._run(
            _or_none(_typed("working_memory.get", body, results.WorkingMemory.from_answer))
        )

    def set(self, content: str, project: str = "", branch: str = "", user_id: str | None = None, **fields):
        """Replace the block (at most 4,000 characters; ``if_revision`` to compare and set); the
        block written, ``changed`` false when it already held this content::

            await bot.working_memory.set("next: the export job", project="billing", branch="ledger-move")
        """
        body = self.agent.scoped(
            {"content": content, "project": project, "branch": branch, "user_id": user_id, **fields}
        )
        return self.agent._run(_typed("working_memory.set", body, results.WorkingMemory.from_answer))


class Briefs:
    """The namespace's session briefs (``session.brief_*``), as this agent."""

    def __init__(self, agent: _Agent) -> None:
        self.agent = agent

    def save(self, **fields):
        """``session.brief_save``: ``brief_key`` or ``project`` and ``branch`` (or ``session_id``),
        with ``events`` and/or ``sections``."""
        return self.agent._run(_one("session.brief_save", self.agent.scoped(fields)))

    def get(self, **fields):
        return self.agent._run(_one("session.brief_get", self.agent.scoped(fields)))

    def list(self, **fields):
        return self.agent._run(_one("session.brief_list", self.agent.scoped(fields)))

    def delete(self, brief_key: str):
        return self.agent._run(_one("session.brief_delete", self.agent.scoped({"brief_key": brief_key})))
