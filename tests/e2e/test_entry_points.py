"""Entry points started the way a user starts them: the installed `loom` command, in an
environment holding only what the README tells a user to set (here LOOM_HOME, beside PATH and
HOME), while `loom up` runs. A test environment that exports more (LOOM_REDIS_URL, say) hides
the defects a user meets."""

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from services import postgres, redis
from services.ports import free_port
from tests.e2e.conftest import Loom, wait_for

pytestmark = pytest.mark.e2e

LOOM = str(Path(sys.executable).parent / "loom")  # the command `pip install` put on the PATH


@pytest.fixture(scope="module")
def loom():
    loom = Loom(Path(tempfile.mkdtemp(prefix="loom-e2e-")) / "home", free_port())
    loom.up()
    yield loom
    loom.stop()
    postgres.stop(loom.home)
    redis.stop(loom.home)


def users_env(loom: Loom) -> dict[str, str]:
    home = loom.home.parent / "user"
    home.mkdir(exist_ok=True)
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LOOM_HOME": str(loom.home)}


def test_loom_mcp_serves_a_user_who_set_only_loom_home(loom):
    token = loom.cli("tokens", "create", "--namespace", "mcp", "--role", "writer").strip()
    server = StdioServerParameters(command=LOOM, args=["mcp"], env={**users_env(loom), "LOOM_TOKEN": token})

    async def session():
        async with Client(server) as client:
            tools = sorted(tool.name for tool in (await client.list_tools()).tools)
            saved = await client.call_tool("loom_brief_save", {"brief_key": "k", "sections": {"goal": "g"}})
            return tools, saved

    tools, saved = asyncio.run(session())
    assert tools == ["loom_brief_get", "loom_brief_list", "loom_brief_save", "loom_search"]
    assert not saved.is_error, saved.content


def test_ctrl_c_stops_a_worker_cleanly(loom):
    worker = subprocess.Popen(
        [LOOM, "worker", "--threads", "1"], env=users_env(loom), stderr=subprocess.PIPE, text=True
    )
    lines: list[str] = []
    wait_for(lambda: lines.append(worker.stderr.readline()) or "worker up" in lines[-1], 60, "the worker")
    worker.send_signal(signal.SIGINT)
    code = worker.wait(60)
    printed = "".join(lines) + worker.stderr.read()
    assert code == 0 and "Traceback" not in printed, printed
