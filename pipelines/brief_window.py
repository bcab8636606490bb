"""The brief_window stage's work: a window of a save's events made into the sections it revises,
by the model (the prompt: the brief as it is, then the window's events; and the typed answer
instructor asks for) or by the deterministic builder, with no model. The builder writes what
events say outright (the goal the user asked, the status last reported, the files touched, the
errors met, and pointers to the commands, searches and tools used) and never decisions or dead
ends, which take judgement; state it does not see in the window is carried over."""

import json

from pydantic import BaseModel, Field

from pipelines import briefs
from pipelines.brief_events import line

INSTRUCTIONS = (
    "You keep the brief of one line of work: what someone resuming it tomorrow, in another tool "
    "or as a teammate, needs to know. You get the brief as it is and the events since it was "
    "written, oldest first. Return the brief's state as it stands after the events: goal, status "
    "(where things are now), open questions, next steps, key files, errors still open, "
    "constraints and pointers (commands, searches, links worth rerunning), each list complete, "
    "not a diff. Return as new_decisions, new_dead_ends and new_done only what the events add: a "
    "choice made and why, an approach tried that failed and why, work finished. Be concise: one "
    "line an item. Never copy secrets, passwords, keys or personal numbers."
)
BRIEF_CHARS_IN_PROMPT = briefs.MAX_CHARS + 500  # the brief as JSON, at most about this


class Revision(BaseModel):
    goal: str | None = Field(default=None, description="the goal of the line of work")
    status: str | None = Field(default=None, description="where things stand now")
    open_questions: list[str] = Field(default_factory=list)
    next_steps: list[str] = Field(default_factory=list)
    key_files: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list, description="errors not yet resolved")
    constraints: list[str] = Field(default_factory=list)
    pointers: list[str] = Field(default_factory=list)
    new_decisions: list[str] = Field(default_factory=list, description="decisions the events add")
    new_dead_ends: list[str] = Field(default_factory=list, description="dead ends the events add")
    new_done: list[str] = Field(default_factory=list, description="work the events finished")


def prompt(current: dict, events: list[dict], budget: int) -> str:
    """The brief and as many of the window's events as ``budget`` characters hold, oldest first
    (the window was cut to fit a prompt of the default size)."""
    head = f"The brief as it is (JSON):\n{json.dumps(current, ensure_ascii=False)}\n\nThe events since:\n"
    lines, room = [], budget - len(head)
    for event in events:
        text = line(event)
        if len(text) + 1 > room:
            break
        lines.append(text)
        room -= len(text) + 1
    return head + "\n".join(lines)


def update_from(revision: Revision) -> dict:
    """The model's answer as the sections a revision writes (``briefs.merged`` applies them):
    the state it returned, and what it adds to decisions, dead ends and done."""
    update = {name: value for name in ("goal", "status") if (value := getattr(revision, name)) is not None}
    for name in ("open_questions", "next_steps", "key_files", "errors", "constraints", "pointers"):
        update[name] = getattr(revision, name)
    for name in ("decisions", "dead_ends", "done"):
        update[name] = getattr(revision, f"new_{name}")
    return update


# --- the deterministic builder ----------------------------------------------------------------

STATUS_KINDS = ("assistant", "note", "summary")


def _first_line(text: str, limit: int) -> str:
    first = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _newest_first(items: list[str], carried: list[str], cap: int) -> list[str]:
    return list(dict.fromkeys([*reversed(items), *carried]))[:cap]


def build(current: dict, events: list[dict]) -> dict:
    """The sections this window revises (``briefs.merged`` applies them)."""
    update: dict = {}
    asked = [e for e in events if e["kind"] == "user" and e["text"].strip()]
    if not current.get("goal") and asked:
        update["goal"] = _first_line(asked[0]["text"], 300)
    reported = [e for e in events if e["kind"] in STATUS_KINDS and e["text"].strip()]
    if reported:
        update["status"] = _first_line(reported[-1]["text"], 500)
    elif events:
        update["status"] = f"Last: {_first_line(line(events[-1]), 300)}"
    files = [e["path"] for e in events if e.get("path") and e["kind"] in ("edit", "read")]
    errors = [
        _first_line(line(e), 300)
        for e in events
        if e["kind"] == "error" or (e["kind"] == "command" and e.get("exit_code") not in (None, 0))
    ]
    pointers = [
        _first_line(f"$ {e['command']}" if e.get("command") else line(e), 200)
        for e in events
        if e["kind"] in ("command", "search", "tool")
    ]
    for name, found in (("key_files", files), ("errors", errors), ("pointers", pointers)):
        if found:
            cap = briefs.BY_NAME[name].cap
            assert cap is not None  # these list sections each keep at most their cap
            update[name] = _newest_first(found, current.get(name, []), cap)
    return update
