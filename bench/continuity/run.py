"""The continuity benchmark: does what a person told one session reach the agent, unasked, in the
session that needs it? (issue 36, "Measure it"; the method and the figures: README.md here.)

    .venv/bin/python bench/continuity/run.py [--scenarios a,b] [--nights after-each|none]
        [--recall always|never] [--shared-namespace] [--out FILE] [--keep-home]

It starts `loom up` (embedded servers, a fresh LOOM_HOME, the default local embedder) with the
LLM on ``fake_model.py``'s server, gives each scenario its own namespace (one person's memory;
``--shared-namespace``: one for all, as one person's memory of all their work), writer token and
machine (HOME, CLAUDE_PLUGIN_DATA, a git repository or a plain folder), and plays the scenarios'
sessions day by day: on day d every scenario plays its session d through the plugin's hooks as
Claude Code runs them (``client.py``); then the runner waits until the hooks' spools are empty
and no stage run is pending, and (``--nights after-each``) weaves the night with
`loom night-weave --wait`.

A session: SessionStart (source startup); for each prompt, UserPromptSubmit (when hooks.json has
it), the prompt then written to the transcript, its tool calls (each followed by PostToolUse), the
agent's recall (``--recall always``: for a prompt that needs a fact, the agent calls the plugin's
MCP tool loom_memory_search over Loom's /mcp with the prompt as query, and PostToolUse runs for that
call as for any other), the canned answer, Stop; at the end SessionEnd (reason other).

Progress goes to stderr; the table then one JSON object (the last line) go to stdout."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parents[1])]

from client import MCP_TOOL, Client, Session, git_repo, has_hook, tool_response  # noqa: E402
from fake_model import Model  # noqa: E402
from harness import Loom, code_version, log  # noqa: E402
from report import Played, SessionPlayed, render, summary  # noqa: E402
from scenario import Scenario, load  # noqa: E402

SEARCH_LIMIT = 5
SPOOL_STUCK_S = 20
SETTLE_TIMEOUT_S = float(os.environ.get("CONTINUITY_SETTLE_TIMEOUT_S", 600))


class Person:
    """A scenario's person: namespace, token, machine and Claude Code."""

    def __init__(self, loom: Loom, scenario: Scenario, root: Path, namespace: str | None) -> None:
        self.scenario = scenario
        self.namespace = namespace or f"cont-{scenario.name.replace('_', '-')}"
        self.token = loom.cli(
            "tokens", "create", "--namespace", self.namespace, "--role", "writer", "--recording"
        )
        self.token = self.token.strip().splitlines()[-1]
        self.home = root / scenario.name
        (self.home / "transcripts").mkdir(parents=True)
        if scenario.repo:
            repo = scenario.repo
            self.cwd, self.branch = (
                git_repo(self.home / repo["name"], repo["remote"], repo["branch"]),
                repo["branch"],
            )
        else:
            self.cwd, self.branch = self.home / "chats", "main"
            self.cwd.mkdir()
        self.plugin_data = self.home / "plugin-data"
        self.client = Client(
            {
                "PATH": os.environ["PATH"],
                "HOME": str(self.home),
                "LOOM_URL": loom.base_url,
                "LOOM_TOKEN": self.token,
                "LOOM_USER": scenario.user,
                "CLAUDE_PLUGIN_DATA": str(self.plugin_data),
            }
        )
        self.played = Played(scenario=scenario, namespace=self.namespace, runs=self.client.runs)

    def spool(self) -> list[Path]:
        return sorted(self.plugin_data.glob("*/spool/*.json"))

    def spooled(self) -> int:
        return len(self.spool())


def searched(loom: Loom, token: str, query: str) -> tuple[list[dict], list]:
    """The agent's loom_memory_search over Loom's /mcp: the hits, and the tool result's content
    blocks (what Claude Code hands PostToolUse as the MCP tool's response)."""
    from mcp import Client as McpClient
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def call():
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with McpClient(streamable_http_client(f"{loom.base_url}/mcp", http_client=http)) as mcp:
            return await mcp.call_tool("loom_memory_search", {"query": query, "limit": SEARCH_LIMIT})

    result = asyncio.run(call())
    blocks = [{"type": "text", "text": b.text} for b in result.content if getattr(b, "type", "") == "text"]
    structured = result.structured_content
    if isinstance(structured, dict) and set(structured) == {"result"}:
        structured = structured["result"]
    hits = structured if isinstance(structured, list) else json.loads(blocks[0]["text"]) if blocks else []
    return hits, blocks


def play_session(loom: Loom, person: Person, day: int, recall: bool) -> SessionPlayed:
    s = person.scenario
    session = Session(person.home / "transcripts", person.cwd, person.branch)
    client = person.client
    played = SessionPlayed(day=day, session_id=session.id)
    played.start = client.fire("SessionStart", session, source="startup", model="claude-opus-4-8")
    prompting = has_hook("UserPromptSubmit")
    for prompt in s.sessions[day]:
        played.prompts.append(
            client.fire("UserPromptSubmit", session, prompt=prompt.say) if prompting else []
        )
        session.transcript.user(prompt.say)
        for tool in prompt.tools:
            given = dict(tool.input)
            for key in ("file_path", "notebook_path"):
                if key in given:
                    given[key] = str(person.cwd / given[key])
            call_id = session.transcript.tool(tool.name, given, tool.result, tool.error)
            response = tool_response(tool.result, tool.error)
            client.fire(
                "PostToolUse",
                session,
                tool_name=tool.name,
                tool_input=given,
                tool_response=response,
                tool_use_id=call_id,
            )
        hits: list[dict] = []
        if recall and prompt.needs:
            hits, blocks = searched(loom, person.token, prompt.say)
            name = MCP_TOOL.format("loom_memory_search")
            query = {"query": prompt.say, "limit": SEARCH_LIMIT}
            call_id = session.transcript.tool(name, query, json.dumps(hits))
            played.recall_runs += client.fire(
                "PostToolUse",
                session,
                tool_name=name,
                tool_input=query,
                tool_response=blocks,
                tool_use_id=call_id,
            )
        played.searched.append([str(h.get("id")) for h in hits])
        session.transcript.text(prompt.answer)
        client.fire("Stop", session, stop_hook_active=False, last_assistant_message=prompt.answer)
    played.end = client.fire("SessionEnd", session, reason="other")
    return played


def settle(loom: Loom, people: list[Person]) -> dict:
    """Wait until every hook's spool is sent and no stage run is pending or running. A spool left
    with nothing running for SPOOL_STUCK_S (a call of the detached sender timed out on a loaded
    machine: the plugin keeps it for its next hook run) is sent by the plugin's own sender, as the
    person's next hook would; those resends are counted."""
    started = time.monotonic()
    quiet_since, resends = None, 0
    with loom.connect() as conn:
        while True:
            spooled = sum(p.spooled() for p in people)
            live = conn.execute(
                "SELECT count(*) FROM stage_runs WHERE status IN ('pending', 'running')"
            ).fetchone()[0]
            if spooled == 0 and live == 0:
                return {"seconds": round(time.monotonic() - started, 1), "resends": resends}
            now = time.monotonic()
            quiet_since = (quiet_since or now) if live == 0 else None
            if quiet_since is not None and now - quiet_since > SPOOL_STUCK_S:
                for p in people:
                    if p.spooled():
                        log(f"{p.scenario.name}: {p.spooled()} requests left in the spool; sending them")
                        p.client.send_spool()
                        resends += 1
                quiet_since = None
            if now - started > SETTLE_TIMEOUT_S:
                left = [f.name for p in people for f in p.spool()]
                raise TimeoutError(
                    f"not settled after {SETTLE_TIMEOUT_S} s: {live} runs live, still spooled: {left}"
                )
            time.sleep(0.3)


def night(loom: Loom) -> dict:
    """One night woven now (`loom night-weave --wait`): what it did, from its runs' results."""
    with loom.connect() as conn:
        before = conn.execute(
            "SELECT coalesce(max(id), 0) FROM stage_runs WHERE stage = 'night_weaving'"
        ).fetchone()[0]
    started = time.perf_counter()
    said = loom.cli("night-weave", "--wait", timeout=SETTLE_TIMEOUT_S).strip()
    seconds = time.perf_counter() - started
    with loom.connect() as conn:
        rows = conn.execute(
            "SELECT status, result FROM stage_runs WHERE stage = 'night_weaving' AND id > %s", (before,)
        ).fetchall()
    return {
        "said": said,
        "seconds": round(seconds, 1),
        "runs": [{"status": st, **(r or {})} for st, r in rows],
    }


def collect(loom: Loom, people: list[Person]) -> None:
    """Each person's memory threads and LoomSessions as Loom holds them at the end."""
    with loom.connect() as conn:
        for p in people:
            p.played.threads = [
                {"id": str(i), "content": c, "kind": k, "weight": w, "cues": list(cues or [])}
                for i, c, k, w, cues in conn.execute(
                    "SELECT id, content, kind, weight, cues FROM memory_threads "
                    "WHERE namespace = %s AND cut_at IS NULL",
                    (p.namespace,),
                ).fetchall()
            ]
            columns = (
                "tapestry_thread_ids",
                "suggested_thread_ids",
                "held_back_thread_ids",
                "cued_thread_ids",
                "recalled_thread_ids",
                "seen_thread_ids",
                "judged_thread_ids",
            )
            rows = conn.execute(
                f"SELECT thread_id, {', '.join(columns)} FROM loom_sessions WHERE namespace = %s",
                (p.namespace,),
            ).fetchall()
            p.played.loom_sessions = {
                row[0]: {c: [str(x) for x in (v or [])] for c, v in zip(columns, row[1:], strict=True)}
                for row in rows
            }


@contextmanager
def scratch(keep: bool) -> Iterator[str]:
    """The people's machines (homes, plugin data, transcripts); kept with ``--keep-home``."""
    root = tempfile.mkdtemp(prefix="loom-continuity-")
    try:
        yield root
    finally:
        if keep:
            log(f"kept the people's machines in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", help="comma-separated names (default: all)")
    parser.add_argument("--nights", choices=("after-each", "none"), default="after-each")
    parser.add_argument("--recall", choices=("always", "never"), default="always")
    parser.add_argument(
        "--shared-namespace",
        action="store_true",
        help="one namespace (one loom) for every scenario, as one person's memory of all their work",
    )
    parser.add_argument("--out", type=Path, help="also write the JSON report here")
    parser.add_argument("--keep-home", action="store_true")
    args = parser.parse_args()

    scenarios = load(args.scenarios.split(",") if args.scenarios else None)
    model = Model(scenarios).start()
    llm = {"LOOM_LLM_PROVIDER": "openai", "LOOM_LLM_BASE_URL": model.base_url, "LOOM_LLM_MAX_RETRIES": "0"}
    started = time.perf_counter()
    nights: list[dict] = []
    settled: list[dict] = []
    try:
        with (
            scratch(args.keep_home) as root,
            Loom(args.keep_home, llm) as loom,
        ):
            shared = "continuity" if args.shared_namespace else None
            people = [Person(loom, s, Path(root), shared) for s in scenarios]
            for day in range(max(len(s.sessions) for s in scenarios)):
                for person in people:
                    if day < len(person.scenario.sessions):
                        log(f"day {day + 1}: {person.scenario.name}")
                        person.played.sessions.append(
                            play_session(loom, person, day, args.recall == "always")
                        )
                settled.append(settle(loom, people))
                log(f"day {day + 1}: settled {settled[-1]}")
                if args.nights == "after-each":
                    nights.append({"after_day": day + 1, **night(loom)})
                    settled.append(settle(loom, people))
                    log(f"night {day + 1}: {nights[-1]['said']!r}")
            collect(loom, people)
    finally:
        model.stop()
    out = summary([p.played for p in people], nights)
    out.update(
        code=code_version(),
        hooks=sorted(
            json.loads((HERE.parents[1] / "integrations/claude-code/loom/hooks/hooks.json").read_text())[
                "hooks"
            ]
        ),
        model_asked=model.asked,
        spool_resends=sum(x["resends"] for x in settled),
        options={"nights": args.nights, "recall": args.recall, "shared_namespace": args.shared_namespace},
        wall_s=round(time.perf_counter() - started, 1),
    )
    print(render(out))
    text = json.dumps(out)
    if args.out:
        args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(text)


if __name__ == "__main__":
    main()
