"""Entry points started the way a user starts them: the installed `loom` command, in an
environment holding only what the README tells a user to set (here LOOM_HOME, beside PATH and
HOME), while `loom up` runs. A test environment that exports more (LOOM_REDIS_URL, say) hides
the defects a user meets."""

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from services import postgres, redis
from services.ports import free_port
from tests.e2e.conftest import Loom, wait_for
from tests.support.mcp_tools import CORE_TOOLS

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


# One call of every core tool, in an order where each finds what an earlier one wrote (a call's
# arguments a function of the answers so far, when it names what one of them wrote).
CALLS: list[tuple[str, dict | Callable[[dict], dict]]] = [
    ("loom_brief_save", {"project": "billing", "branch": "ledger", "sections": {"goal": "Move invoices"}}),
    ("loom_brief_list", {"project": "billing"}),
    ("loom_brief_get", {"project": "billing"}),
    ("loom_memory_set", {"content": "The export job reads the ledger every night."}),
    ("loom_memory_search", {"query": "export job ledger", "limit": 5}),
    ("loom_memory_pin", lambda answers: {"thread": answers["loom_memory_set"]["id"]}),
    ("loom_reflect", {"question": "when does the export job read the ledger?"}),
    (
        "loom_working_memory_set",
        {"project": "billing", "branch": "ledger", "content": "next: the export job"},
    ),
    ("loom_working_memory_get", {"project": "billing", "branch": "ledger"}),
    ("loom_context_pack", {"thread_id": "billing", "project": "billing", "branch": "ledger"}),
    ("loom_search", {"query": "billing ledger export"}),
]


async def every_tool(client: Client) -> tuple[list[str], dict[str, str]]:
    """The tools listed, and each call's error text (none when every call answered)."""
    tools = sorted(tool.name for tool in (await client.list_tools()).tools)
    errors, answers = {}, {}
    for name, arguments in CALLS:
        result = await client.call_tool(name, arguments(answers) if callable(arguments) else arguments)
        if result.is_error:
            errors[name] = result.content[0].text
        answers[name] = result.structured_content
    return tools, errors


@pytest.mark.parametrize("how", ["namespace", "token"])
def test_loom_mcp_serves_a_user_who_set_only_loom_home(loom, how):
    """As the README starts it on the Loom host (`loom mcp --namespace NS`), and with a token."""
    if how == "namespace":
        server = StdioServerParameters(
            command=LOOM, args=["mcp", "--namespace", "mcp-local"], env=users_env(loom)
        )
    else:
        token = loom.cli("tokens", "create", "--namespace", "mcp", "--role", "writer").strip()
        server = StdioServerParameters(
            command=LOOM, args=["mcp"], env={**users_env(loom), "LOOM_TOKEN": token}
        )

    async def session():
        async with Client(server) as client:
            return await every_tool(client)

    tools, errors = asyncio.run(session())
    assert tools == CORE_TOOLS and not errors, errors


def test_mcp_over_http_serves_every_tool(loom):
    token = loom.cli("tokens", "create", "--namespace", "mcp-http", "--role", "writer").strip()
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})

    async def session():
        async with Client(
            streamable_http_client(f"http://127.0.0.1:{loom.port}/mcp", http_client=http)
        ) as client:
            return await every_tool(client)

    tools, errors = asyncio.run(session())
    assert tools == CORE_TOOLS and not errors, errors


@pytest.mark.parametrize(
    "data_directory,code", [(True, 75), (False, 2)], ids=["stopped", "no-data-directory"]
)
def test_loom_mcp_without_a_running_loom_is_one_line_and_exit_75(tmp_path, data_directory, code):
    """A data directory whose Loom is stopped: try again later (75); none at all: the shell lacks
    the server's LOOM_HOME (2)."""
    home = tmp_path / "home"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LOOM_HOME": str(home)}
    if data_directory:
        subprocess.run([LOOM, "db", "upgrade"], env=env, check=True, capture_output=True, timeout=120)
    stopped = subprocess.run(
        [LOOM, "mcp", "--namespace", "dev"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert stopped.returncode == code, stopped.stderr[-2000:]
    said = stopped.stderr.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("error: ") and "Traceback" not in stopped.stderr, said
    assert stopped.stdout == ""  # stdout is the MCP channel: nothing a client would misread


def loom_search(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """`loom search` with Python's import log on stderr (PYTHONPROFILEIMPORTTIME)."""
    return subprocess.run(
        [LOOM, "search", *args],
        env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def imported(stderr: str) -> set[str]:
    lines = [line for line in stderr.splitlines() if line.startswith("import time:")]
    return {line.rsplit("|", 1)[-1].strip() for line in lines}


def test_loom_search_asks_the_running_api_and_imports_no_database_driver_or_model(loom):
    ns = "cli-search"
    loom.cli("op", "conversation.set_logging", json.dumps({"namespace": ns, "enabled": True}))
    for n, content in enumerate(["The ferry to Naxos leaves at seven.", "We keep the bikes in the shed."]):
        turn = {"namespace": ns, "thread_id": "t", "role": "user", "content": content, "msg_id": f"m{n}"}
        loom.cli("op", "conversation.append", json.dumps(turn))

    def embedded() -> bool:
        return loom.sql("SELECT count(*) FROM stage_runs WHERE status <> 'succeeded'")[0][0] == 0

    wait_for(embedded, 60, "the turns' runs")
    # A user who started `loom up` on another port sets it for their commands too.
    env = {**users_env(loom), "LOOM_PORT": str(loom.port)}
    fast = loom_search(env, ns, "when does the ferry leave", "--json")
    assert fast.returncode == 0, fast.stderr[-2000:]
    modules = imported(fast.stderr)
    assert "http.client" in modules
    assert not modules & {"sqlalchemy", "psycopg", "onnxruntime", "tokenizers", "ops", "services", "httpx"}

    # No API on the port: the same search in this process, answered alike.
    alone = loom_search({**env, "LOOM_PORT": str(free_port())}, ns, "when does the ferry leave", "--json")
    assert alone.returncode == 0, alone.stderr[-2000:]
    assert {"sqlalchemy", "onnxruntime"} <= imported(alone.stderr)
    hits = [json.loads(answer.stdout)["hits"] for answer in (fast, alone)]
    assert hits[0][0]["msg_id"] == "m0"  # the ferry
    assert [h["msg_id"] for h in hits[0]] == [h["msg_id"] for h in hits[1]]

    # For people, a table: a row a hit, best first, that fits the terminal.
    for columns in ("80", "200"):
        read = loom_search({**env, "COLUMNS": columns}, ns, "when does the ferry leave")
        assert read.returncode == 0, read.stderr[-2000:]
        rows = read.stdout.splitlines()
        assert rows[0].split()[:2] == ["#", "thread"] and all(len(row) <= int(columns) for row in rows)
        assert rows[2].split()[:2] == ["1", "t"]
        assert "The ferry to Naxos leaves at seven." in " ".join(read.stdout.split())  # whole, wrapped or not
        assert re.fullmatch(r"\d+ hits? \(hybrid\)", rows[-1]), rows


def test_loom_search_refuses_bad_input_from_the_api_in_one_line(loom):
    env = {**users_env(loom), "LOOM_PORT": str(loom.port)}
    for args in (["cli-search", "x" * 20_000], ["cli-search", "ferry", "--limit", "0"]):
        refused = loom_search(env, *args)
        assert refused.returncode == 2, refused.stderr[-2000:]
        said = [line for line in refused.stderr.splitlines() if not line.startswith("import time:")]
        assert len(said) == 1 and said[0].startswith("error: "), said
        assert "sqlalchemy" not in imported(refused.stderr)  # the API refused it, not this process


def test_ctrl_c_stops_a_worker_cleanly(loom):
    worker = subprocess.Popen(
        [LOOM, "worker", "--threads", "1"], env=users_env(loom), stderr=subprocess.PIPE, text=True
    )
    lines: list[str] = []
    wait_for(lambda: lines.append(worker.stderr.readline()) or "worker up" in lines[-1], 60, "the worker")
    worker.send_signal(signal.SIGINT)
    # communicate() drains stderr while waiting: a worker logging the shared loom's queued work
    # would otherwise fill the pipe and block in write(), never reaching its exit.
    rest = worker.communicate(timeout=60)[1]
    code = worker.returncode
    printed = "".join(lines) + rest
    assert code == 0 and "Traceback" not in printed, printed


def test_loom_up_on_a_busy_port_refuses_in_one_line_before_starting_anything(scratch):
    (scratch / "user").mkdir()
    with socket.create_server(("127.0.0.1", 0)) as holder:  # another program on the port
        port = holder.getsockname()[1]
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(scratch / "user"),
            "LOOM_HOME": str(scratch / "home"),
            "LOOM_PORT": str(port),
        }
        refused = subprocess.run([LOOM, "up"], env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    said = [line for line in refused.stderr.splitlines() if line.strip()]
    assert len(said) == 1 and said[0].startswith("error: ") and f"127.0.0.1:{port}" in said[0], said
    assert "LOOM_PORT" in said[0] and not refused.stdout
    started = [p.name for p in (scratch / "home").iterdir()] if (scratch / "home").exists() else []
    assert not {"postgres", "redis"} & set(started), started
    # The one-Loom-per-directory lock came first, and is let go: no child's pid file, no pid in it.
    assert [p.name for p in (scratch / "home" / "run").iterdir()] == ["up.pid"]
    assert (scratch / "home" / "run" / "up.pid").read_text() == ""


def test_loom_up_beyond_the_loopback_asks_for_the_allowed_host_names_in_one_line(scratch):
    (scratch / "user").mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(scratch / "user"),
        "LOOM_HOME": str(scratch / "home"),
        "LOOM_HOST": "0.0.0.0",
        "LOOM_PORT": str(free_port()),
    }
    for command in (["up"], ["api"]):
        refused = subprocess.run([LOOM, *command], env=env, capture_output=True, text=True, timeout=60)
        said = [line for line in refused.stderr.splitlines() if line.strip()]
        assert refused.returncode == 2 and len(said) == 1 and "LOOM_ALLOWED_HOSTS" in said[0], said
        assert not (scratch / "home" / "postgres").exists()
