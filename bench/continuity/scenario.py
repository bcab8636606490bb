"""The continuity benchmark's scenarios (``scenarios/*.json``): sessions of prompts a person types,
the facts some prompts state, and the prompts of later sessions that need them.

A fact's ``said`` is a sentence that appears word for word in exactly one prompt: that is how the
test model (``fake_model.py``) knows the fact was stated, and so what a good extractor returns. A
fact is needed only in a session after the one that states it. ``supersedes`` names a fact the
newer one replaces (a decision reversed): the older one reaching a later session is counted as
stale."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
KINDS = ("Semantic", "Episodic", "Procedural")
CLIENTS = ("coding", "chat")


@dataclass(frozen=True)
class Fact:
    id: str
    said: str
    content: str
    kind: str
    subjects: list[str]
    cues: list[str]
    supersedes: str | None = None


@dataclass(frozen=True)
class Tool:
    name: str
    input: dict
    result: str
    error: bool = False


@dataclass(frozen=True)
class Prompt:
    say: str
    answer: str
    needs: list[str] = field(default_factory=list)
    tools: list[Tool] = field(default_factory=list)


@dataclass(frozen=True)
class Scenario:
    name: str
    about: str
    client: str
    user: str
    repo: dict | None
    facts: dict[str, Fact]
    sessions: list[list[Prompt]]

    def stated_in(self, fact: str) -> int:
        """The index of the session whose prompts state ``fact``."""
        return next(
            i for i, prompts in enumerate(self.sessions) for p in prompts if self.facts[fact].said in p.say
        )

    def facts_in(self, text: str) -> list[Fact]:
        return [f for f in self.facts.values() if f.said in text]


def parsed(raw: dict) -> Scenario:
    facts = {
        key: Fact(
            id=key,
            said=f["said"],
            content=f["content"],
            kind=f["kind"],
            subjects=list(f.get("subjects", [])),
            cues=list(f.get("cues", [])),
            supersedes=f.get("supersedes"),
        )
        for key, f in raw["facts"].items()
    }
    sessions = [
        [
            Prompt(
                say=p["say"],
                answer=p["answer"],
                needs=list(p.get("needs", [])),
                tools=[
                    Tool(t["name"], t["input"], t["result"], bool(t.get("error", False)))
                    for t in p.get("tools", [])
                ],
            )
            for p in session["prompts"]
        ]
        for session in raw["sessions"]
    ]
    scenario = Scenario(
        raw["name"], raw["about"], raw["client"], raw["user"], raw.get("repo"), facts, sessions
    )
    check(scenario)
    return scenario


def check(s: Scenario) -> None:
    """A scenario that could not measure what it claims is refused, with the reason."""

    def bad(why: str) -> ValueError:
        return ValueError(f"scenario {s.name}: {why}")

    if s.client not in CLIENTS:
        raise bad(f"client {s.client!r} is not one of {CLIENTS}")
    if (s.client == "coding") != (s.repo is not None):
        raise bad("a coding scenario has a repo, a chat scenario none")
    prompts = [p.say for session in s.sessions for p in session]
    for fact in s.facts.values():
        if fact.kind not in KINDS:
            raise bad(f"fact {fact.id}: kind {fact.kind!r}")
        if sum(fact.said in say for say in prompts) != 1:
            raise bad(f"fact {fact.id}: its sentence is not in exactly one prompt")
        if fact.supersedes is not None and fact.supersedes not in s.facts:
            raise bad(f"fact {fact.id} supersedes an unknown fact")
    for i, session in enumerate(s.sessions):
        for p in session:
            for need in p.needs:
                if need not in s.facts:
                    raise bad(f"a prompt needs unknown fact {need}")
                if s.stated_in(need) >= i:
                    raise bad(f"fact {need} is needed in session {i + 1} but not stated before it")


def load(names: list[str] | None = None, folder: Path = SCENARIOS) -> list[Scenario]:
    files = sorted(folder.glob("*.json"))
    chosen = [parsed(json.loads(f.read_text())) for f in files]
    if names:
        missing = set(names) - {s.name for s in chosen}
        if missing:
            raise SystemExit(f"no such scenario: {', '.join(sorted(missing))}")
        chosen = [s for s in chosen if s.name in names]
    return chosen
