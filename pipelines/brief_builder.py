"""The deterministic builder: a brief revised from a window of events with no model. It writes
what events say outright (the goal the user asked, the status last reported, the files touched,
the errors met, and pointers to the commands, searches and tools used) and never decisions or dead
ends, which take judgement. State it does not see in the window is carried over."""

from pipelines import briefs
from pipelines.brief_events import line

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
