"""Loom over MCP, driven by the official ``mcp`` package's own client: /mcp on a live API server
(streamable HTTP, bearer auth) and `loom mcp` over stdio. The core listing, the all toolset, the
search sections, briefs, refusals as tool errors, and the implicit run of an MCP session."""

import asyncio
import json
import os
import sys
import uuid

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from api.mcp import ImplicitRuns
from ops.caller import OPERATOR, create_token
from ops.registry import call
from tests.support.calls import append, enable_logging
from tests.support.mcp_tools import CORE_TOOLS
from tests.support.waits import settled, wait_until

NS = "mcp"


MEMORY = "The invoices went to the new ledger, which the export job reads every night."


@pytest.fixture(scope="module")
def said(database):
    enable_logging(NS)
    append(NS, "billing", "We moved the invoices to the new ledger in March.", user_id="ana")
    # About what the test asks for: memory search, like conversation search, has a relevance floor.
    call("memory.set", OPERATOR, {"namespace": NS, "content": MEMORY})


def over_http(url: str, token: str, toolset: str | None = None, mode: str = "auto") -> Client:
    endpoint = f"{url}/mcp" + (f"?toolset={toolset}" if toolset else "")
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(endpoint, http_client=client), mode=mode)


def payload(result) -> object:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        content = result.structured_content
        return (
            content.get("result", content)
            if isinstance(content, dict) and set(content) == {"result"}
            else content
        )
    return (
        json.loads(result.content[0].text) if result.content[0].text[:1] in "[{" else result.content[0].text
    )


def test_the_core_listing_searches_both_sections_and_keeps_briefs(live_api, said, worker):
    wait_until(settled, what="the turn's and the memory's embeddings")
    token = create_token([NS], "writer")

    async def session():
        async with over_http(live_api, token) as client:
            tools = sorted(tool.name for tool in (await client.list_tools()).tools)
            found = payload(await client.call_tool("loom_search", {"query": "where did the invoices go"}))
            saved = payload(
                await client.call_tool(
                    "loom_brief_save",
                    {"project": "billing", "branch": "ledger", "sections": {"goal": "Move invoices"}},
                )
            )
            markdown = payload(await client.call_tool("loom_brief_get", {"project": "billing"}))
            listed = payload(await client.call_tool("loom_brief_list", {"project": "billing"}))
            refused = await client.call_tool("loom_brief_get", {"brief_key": "no such brief"})
            named = payload(await client.call_tool("loom_search", {"query": "resume the billing work"}))
            return tools, found, saved, markdown, listed, refused, named

    tools, found, saved, markdown, listed, refused, named = asyncio.run(session())
    assert tools == CORE_TOOLS  # conversation.search is not listed, nor the append
    assert found["conversation"][0]["excerpt"].startswith("We moved the invoices")
    assert found["memory"][0]["content"] == MEMORY
    assert saved["brief_key"] == "auto/billing/ledger" and saved["revision"] == 1
    assert markdown.startswith("# Brief auto/billing/ledger") and "Move invoices" in markdown
    assert [b["brief_key"] for b in listed] == ["auto/billing/ledger"]
    assert refused.is_error and "422" in refused.content[0].text
    assert found["briefs"] == []  # the query names no brief
    # The briefs section names a brief its words name, with its date, and never its contents.
    (brief,) = named["briefs"]
    assert brief["brief_key"] == "auto/billing/ledger" and brief["updated_at"]
    assert set(brief) == {"brief_key", "project", "branch", "updated_at"}


def test_the_memory_tools_remember_search_pack_and_keep_the_working_memory(live_api, said, worker):
    token, viewer = create_token([NS], "writer"), create_token([NS], "viewer")

    async def session():
        async with over_http(live_api, token) as client:
            fact = "The billing export runs at 02:00 UTC from the ledger replica."
            kept = payload(
                await client.call_tool("loom_memory_set", {"content": fact, "subjects": ["billing"]})
            )
            wait_until(settled, what="the memory's embedding")
            found = payload(
                await client.call_tool("loom_memory_search", {"query": "when does the export run"})
            )
            note = {"project": "billing", "branch": "ledger", "user_id": "ana"}
            written = payload(
                await client.call_tool("loom_working_memory_set", note | {"content": "next: the export"})
            )
            read = payload(await client.call_tool("loom_working_memory_get", note))
            pack = payload(await client.call_tool("loom_context_pack", note | {"thread_id": "billing"}))
        async with over_http(live_api, viewer) as client:
            refused = await client.call_tool("loom_memory_set", {"content": "a viewer's fact"})
        return kept, found, written, read, pack, refused

    kept, found, written, read, pack, refused = asyncio.run(session())
    assert kept["stored"] and kept["id"]
    assert found[0]["id"] == kept["id"] and found[0]["kind"] == "Semantic"
    assert written["revision"] == 1 and read["content"] == "next: the export"
    assert pack["working_memory"]["content"] == "next: the export" and "tapestry" in pack
    assert refused.is_error and "403" in refused.content[0].text


def test_loom_memory_pin_pins_a_thread_by_its_id(live_api):
    token, viewer = create_token([NS], "writer"), create_token([NS], "viewer")

    async def session():
        async with over_http(live_api, token) as client:
            kept = payload(
                await client.call_tool("loom_memory_set", {"content": "Deploys freeze on Fridays."})
            )
            pinned = payload(await client.call_tool("loom_memory_pin", {"thread": kept["id"]}))
            unknown = await client.call_tool("loom_memory_pin", {"thread": str(uuid.uuid4())})
            malformed = await client.call_tool("loom_memory_pin", {"thread": "not-an-id"})
        async with over_http(live_api, viewer) as client:
            refused = await client.call_tool("loom_memory_pin", {"thread": kept["id"]})
        return kept, pinned, unknown, malformed, refused

    kept, pinned, unknown, malformed, refused = asyncio.run(session())
    assert pinned == {"id": kept["id"], "content": "Deploys freeze on Fridays.", "pinned": True}
    assert unknown.is_error and "404" in unknown.content[0].text
    assert malformed.is_error and "422" in malformed.content[0].text
    assert refused.is_error and "403" in refused.content[0].text


# The stateless protocol: a session is a token's calls; the handshake: each client's own session.
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_all_toolset_appends_with_each_sessions_implicit_run(live_api, said, mode):
    thread = f"via-mcp-{mode}"

    async def session(token: str, turns: int):
        async with over_http(live_api, token, toolset="all", mode=mode) as client:
            tools = sorted(tool.name for tool in (await client.list_tools()).tools)
            for _ in range(turns):
                body = {"thread_id": thread, "role": "user", "content": f"logged over MCP {uuid.uuid4().hex}"}
                payload(await client.call_tool("loom_conversation_append", body))
            return tools

    one = create_token([NS], "writer")
    other = one if mode == "legacy" else create_token([NS], "writer")
    assert asyncio.run(session(one, 2)) == sorted([*CORE_TOOLS, "loom_conversation_append"])
    asyncio.run(session(other, 1))
    turns = call("conversation.list", OPERATOR, {"namespace": NS, "thread_id": thread})["messages"]
    runs = [turn["run_id"] for turn in turns]
    assert len(turns) == 3 and runs[0] == runs[1] != runs[2] and runs[0].startswith("mcp-")


def test_without_a_token_mcp_is_a_401_and_a_viewer_cannot_save(live_api, said):
    bare = httpx.post(f"{live_api}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert bare.status_code == 401

    async def session():
        async with over_http(live_api, create_token([NS], "viewer")) as client:
            return await client.call_tool("loom_brief_save", {"brief_key": "k", "sections": {"goal": "x"}})

    refused = asyncio.run(session())
    assert refused.is_error and "403" in refused.content[0].text


def test_an_implicit_run_closes_after_the_idle_time():
    runs = ImplicitRuns()
    first = runs.run_of("s-1", idle=60, now=0)
    assert runs.run_of("s-1", idle=60, now=59) == first  # within the idle time: the same run
    assert runs.run_of("s-2", idle=60, now=59) != first  # another session: its own
    assert runs.run_of("s-1", idle=60, now=200) != first  # idle past it: a new run


def test_loom_mcp_over_stdio_serves_the_core_listing(said, monkeypatch):
    from models.settings import get_settings

    settings = get_settings()
    env = {**os.environ, "LOOM_DATABASE_URL": settings.database_url, "LOOM_REDIS_URL": settings.redis_url}
    env.pop("LOOM_TOKEN", None)
    key = f"stdio-{uuid.uuid4().hex[:6]}"
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "cli", "mcp", "--namespace", NS], env=env, cwd=os.getcwd()
    )

    async def session():
        async with Client(server) as client:
            tools = sorted(tool.name for tool in (await client.list_tools()).tools)
            saved = payload(
                await client.call_tool("loom_brief_save", {"brief_key": key, "sections": {"goal": "g"}})
            )
            return tools, saved

    tools, saved = asyncio.run(session())
    assert tools == CORE_TOOLS and saved["revision"] == 1
    got = call("session.brief_get", OPERATOR, {"namespace": NS, "brief_key": key})
    assert got["session_id"].startswith("mcp-")  # the stdio session's implicit run


def test_a_sessions_run_closes_after_the_idle_time_and_the_next_call_starts_another(live_api, said, loom_env):
    loom_env(LOOM_MCP_SESSION_RUN_IDLE_SECONDS="0.5")
    token, thread = create_token([NS], "writer"), f"idle-{uuid.uuid4().hex[:6]}"

    async def session():
        async with over_http(live_api, token, toolset="all") as client:
            for pause in (0, 0, 1.0):
                await asyncio.sleep(pause)
                body = {"thread_id": thread, "role": "user", "content": f"turn {uuid.uuid4().hex}"}
                payload(await client.call_tool("loom_conversation_append", body))

    asyncio.run(session())
    turns = call("conversation.list", OPERATOR, {"namespace": NS, "thread_id": thread})["messages"]
    runs = [turn["run_id"] for turn in turns]
    assert runs[0] == runs[1] != runs[2]  # the pause outlasted the idle time: a new run
