"""What the memory hooks of the coding clients' integrations give the model, as a test reads it:
the context a hook's stdout adds (the one JSON both Claude Code and Codex read), its size in tokens
by Loom's rule, and a call of Loom's MCP tools as a client makes it (its answer, handed to a
PostToolUse hook as Claude Code hands it over)."""

import asyncio
import json
import math

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

# A fact longer than the tapestry of a 200-token session start (150 tokens), with a cue: only its
# cue brings it into a session.
FREEZE = (
    "During a deploy freeze nothing merges to main: the freeze starts every Friday at 15:00 UTC and "
    "ends on Monday at 09:00 UTC, announced in the #releases channel by the release captain. An "
    "urgent fix needs the captain's written approval in the ticket, a second reviewer from the "
    "platform team, and a rollback plan attached before the merge button is pressed; the staging "
    "deploy must have run green for at least one hour, the on-call engineer must be told in the "
    "incident channel, and the change log must name the ticket. Feature flags stay as they are "
    "during the freeze, and database migrations wait for Monday whatever their size or urgency."
)
FREEZE_CUE = "deploy freeze"


def tokens(text: str) -> int:
    """Loom's count (pipelines/token_budget.py, lib/memory.mjs): ceil(characters / 4)."""
    return math.ceil(len(text) / 4)


def injected(stdout: str, event: str) -> str:
    """The context a hook's output adds for ``event``: '' for no output; else it must be exactly
    {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}} (Codex refuses
    any other field)."""
    if not stdout.strip():
        return ""
    output = json.loads(stdout)
    assert set(output) == {"hookSpecificOutput"}, output
    assert output["hookSpecificOutput"]["hookEventName"] == event, output
    assert set(output["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}, output
    return output["hookSpecificOutput"]["additionalContext"]


def mcp_tool(url: str, token: str, tool: str, arguments: dict) -> dict:
    """Call one of Loom's MCP tools at ``url`` (Loom's origin) with ``token``; its result as the
    protocol carries it ({"content": [...], "structuredContent": ..., "isError": false})."""

    async def call() -> dict:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            result = await client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    return asyncio.run(call())


def as_claude_code_gives_it(result: dict) -> str:
    """An MCP tool's result as Claude Code hands it to a PostToolUse hook: its structured content
    as JSON text."""
    return json.dumps(result["structuredContent"])


def texts(value) -> str:
    """Every string in a request body, one a line: what a model was given, whatever its shape."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        value = list(value.values())
    return "\n".join(texts(item) for item in value) if isinstance(value, list) else ""
