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


def mcp_tool(url: str, token: str, tool: str, arguments: dict) -> str:
    """Call one of Loom's MCP tools at ``url`` (Loom's origin) with ``token``; its answer as Claude
    Code gives it to a PostToolUse hook: the structured content as JSON text."""

    async def call() -> str:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            result = await client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        return json.dumps(result.structured_content)

    return asyncio.run(call())
