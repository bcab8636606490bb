"""The continuity benchmark's test model: a local OpenAI-compatible server
(``tests/support/openai_server.FakeOpenAI``, so Loom's real instructor + openai client asks it)
whose answers are deterministic, by which of Loom's prompts it is sent (told by the system
message, the stage's instructions):

- extraction of messages (``pipelines.extraction``): the facts of the scenarios whose sentence
  appears word for word in a numbered user line, each with the scenario's content, kind, subjects
  (and cues, when the schema Loom sends has a ``cues`` field) and the line's number; a fact the
  scenario says supersedes another names, in ``replaces`` (when the schema has it), the label of
  the prompt's already remembered line holding that other fact's content. It is the
  extractor a benchmark of the memory loop needs: perfect and no better, so what is measured is
  what Loom does with the facts, not a model's recall.
- episodes of a session's tool actions (``pipelines.episodes``): one episode naming the actions,
  as a model would write it.
- the night's episodes of a conversation (``pipelines.night_weaving``): one episode naming what
  the user first asked.
- anything else (titles, brief revisions): the words of the prompt (FakeOpenAI's default).
"""

from __future__ import annotations

import re

from scenario import Scenario

from pipelines import episodes, extraction, night_weaving
from tests.support.openai_server import FakeOpenAI, words_reply

# "[n] role: text" (extraction, episodes) or "[n] YYYY-MM-DD HH:MM role: text" (the night).
LINE = re.compile(r"^\[(\d+)\] (?:\d{4}-\d\d-\d\d \d\d:\d\d )?(\w+): (.*)$")
KNOWN = re.compile(r"^\[(m\d+)\] (.*)$", re.M)  # extraction's already remembered threads
EPISODE_CHARS = 300
LOOM_TOOL = re.compile(r"^mcp__\S*loom_")  # an observation of one of Loom's own MCP tools


def _lines(prompt: str) -> list[tuple[int, str, str]]:
    """The numbered lines of a prompt as (number, role, text); a line's text runs to the next."""
    out: list[tuple[int, str, str]] = []
    for raw in prompt.splitlines():
        m = LINE.match(raw)
        if m:
            out.append((int(m.group(1)), m.group(2), m.group(3)))
        elif out:
            n, role, text = out[-1]
            out[-1] = (n, role, f"{text}\n{raw}")
    return out


def _is(system: str, instructions: str) -> bool:
    return system.startswith(instructions[:60])


class Model:
    """The server and what it was asked, by kind of prompt."""

    def __init__(self, scenarios: list[Scenario]) -> None:
        self.scenarios = scenarios
        self.asked: dict[str, int] = {}
        self.server = FakeOpenAI()
        self.server.reply = self.reply

    def start(self) -> Model:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def _count(self, kind: str) -> None:
        self.asked[kind] = self.asked.get(kind, 0) + 1

    def reply(self, request: dict) -> dict:
        messages = request["messages"]
        system, prompt = messages[0]["content"], messages[-1]["content"]
        schema = request["tools"][0]["function"]["parameters"] if "tools" in request else {}
        if _is(system, extraction.INSTRUCTIONS):
            self._count("extraction")
            return {"facts": self.extracted(prompt, schema)}
        if _is(system, episodes.INSTRUCTIONS):
            self._count("action_episodes")
            return {"facts": self.action_episode(prompt)}
        if _is(system, night_weaving.INSTRUCTIONS):
            self._count("night_episodes")
            return {"episodes": self.night_episode(prompt)}
        self._count("other")
        return words_reply(request)

    def extracted(self, prompt: str, schema: dict) -> list[dict]:
        defs: dict = schema.get("$defs") or {}
        fields = {name for d in defs.values() for name in d.get("properties", {})}
        known = {text: label for label, text in KNOWN.findall(prompt)}
        found = []
        for n, role, text in _lines(prompt):
            if role != "user":
                continue
            for scenario in self.scenarios:
                for fact in scenario.facts.values():
                    if fact.said not in text:
                        continue
                    answer = {
                        "content": fact.content,
                        "kind": fact.kind,
                        "subjects": fact.subjects,
                        "lines": [n],
                    }
                    if "cues" in fields:
                        answer["cues"] = fact.cues
                    older = scenario.facts.get(fact.supersedes) if fact.supersedes else None
                    if "replaces" in fields and older is not None and older.content in known:
                        answer["replaces"] = [known[older.content]]
                    found.append(answer)
        return found

    def action_episode(self, prompt: str) -> list[dict]:
        """One episode naming the actions; none when the agent only searched Loom (nothing worth
        remembering, as the instructions say)."""
        lines = [line for line in _lines(prompt) if not LOOM_TOOL.search(line[2])]
        if not lines:
            return []
        did = "; ".join(text for _, _, text in lines[:4])[:EPISODE_CHARS]
        return [
            {
                "content": f"The agent ran {len(lines)} tool action{'s' if len(lines) > 1 else ''}: {did}.",
                "kind": "Episodic",
                "lines": [n for n, _, _ in lines],
            }
        ]

    def night_episode(self, prompt: str) -> list[dict]:
        lines = _lines(prompt)
        asked = next((text for _, role, text in lines if role == "user"), None)
        if asked is None:
            return []
        return [{"content": f"The user asked the assistant: {asked[:EPISODE_CHARS]}", "lines": [lines[0][0]]}]
