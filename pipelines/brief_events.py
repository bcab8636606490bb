"""The events a brief save carries (what happened since the last save), and how they are cut into
the windows the ``brief_window`` stage condenses one at a time.

An event that reads as high is dropped before it is stored: it never reaches a window, so never a
model nor the builder."""

from datetime import datetime
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from pipelines import screening

Kind = Literal["user", "assistant", "edit", "command", "error", "read", "search", "tool", "note", "summary"]
KINDS: tuple[str, ...] = get_args(Kind)
MAX_EVENTS = 4_000  # a save's
TEXT_MAX = 20_000  # an event's text


class Event(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Kind = Field(
        description=(
            "What happened: user, assistant, edit, command, error, read, search, tool, note or summary (a "
            "client's compaction summary)."
        )
    )
    text: str = Field(max_length=TEXT_MAX, description="The event's text (at most 20,000 characters).")
    ts: datetime | None = Field(default=None, description="When it happened, with its UTC offset.")
    path: str | None = Field(default=None, max_length=1_024, description="The file it read or edited.")
    command: str | None = Field(default=None, max_length=4_000, description="The command it ran.")
    exit_code: int | None = Field(
        default=None,
        ge=-(2**31),
        le=2**31 - 1,
        description="The command's exit code (non-zero counts as an error).",
    )
    tool: str | None = Field(default=None, max_length=128, description="The tool it used.")


def line(event: dict) -> str:
    """One event as a line of a window (the model's prompt reads these)."""
    where = [event[field] for field in ("tool", "path", "command") if event.get(field)]
    if event.get("exit_code") is not None:
        where.append(f"exit {event['exit_code']}")
    head = f"[{event['kind']}]" + (f" {' · '.join(where)}" if where else "")
    text = " ".join(event.get("text", "").split())
    return f"{head}: {text}" if text else head


def screened(events: list[Event]) -> tuple[list[dict], int]:
    """The events as stored (JSON), without those that read as high; and how many those were."""
    kept = []
    for event in events:
        stored = event.model_dump(mode="json", exclude_none=True)
        if not screening.is_high(line(stored)):
            kept.append(stored)
    return kept, len(events) - len(kept)


def windows(events: list[dict], chars: int, most: int) -> tuple[list[list[dict]], int]:
    """The events in windows of at most ``chars`` characters of lines (an event longer than a
    window is cut to it), the newest ``most`` windows kept; and how many events older ones held."""
    cut: list[list[dict]] = []
    room = 0
    for event in events:
        over = len(line(event)) - chars
        if over > 0:
            event = {**event, "text": event["text"][: max(len(event["text"]) - over - 1, 0)] + "…"}
        size = len(line(event)) + 1
        if not cut or size > room:
            cut.append([])
            room = chars
        cut[-1].append(event)
        room -= size
    dropped = sum(len(window) for window in cut[:-most]) if len(cut) > most else 0
    return cut[-most:], dropped


def client_summary(events: list[dict]) -> str | None:
    """The client's own last compaction summary among the events, verbatim."""
    summaries = [event["text"] for event in events if event["kind"] == "summary" and event["text"].strip()]
    return summaries[-1] if summaries else None
