"""The Python client of Loom: ``Agent`` (async) and ``SyncAgent`` over its HTTP API.

    from loom import Agent
    async with Agent("dev", "local", "support-bot", base_url="http://localhost:7777") as bot:
        s = bot.session("thread-42", user_id="u1")
        resumed = await s.resume(query="resume the billing migration")
        await s.append({"role": "user", "content": "We moved invoices to the new ledger."})
        await s.close()

The token comes from ``token=`` or ``LOOM_TOKEN``; the address from ``base_url=``, ``LOOM_URL``
or http://127.0.0.1:7777."""

from loom.agent import Agent, Briefs, Context, Memories, Resumed, Session, SyncAgent, WorkingMemories
from loom.errors import (
    Conflict,
    ConnectionFailed,
    Forbidden,
    Invalid,
    LoomError,
    NotFound,
    Unauthorized,
    Unavailable,
)
from loom.results import (
    Hit,
    Memory,
    Pack,
    Recalled,
    Reflection,
    Remembered,
    SearchResult,
    WorkingMemory,
)

__all__ = [
    "Agent",
    "Briefs",
    "Conflict",
    "ConnectionFailed",
    "Context",
    "Forbidden",
    "Hit",
    "Invalid",
    "LoomError",
    "Memories",
    "Memory",
    "NotFound",
    "Pack",
    "Recalled",
    "Reflection",
    "Remembered",
    "Resumed",
    "SearchResult",
    "Session",
    "SyncAgent",
    "Unauthorized",
    "Unavailable",
    "WorkingMemories",
    "WorkingMemory",
]
