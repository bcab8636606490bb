"""What every transcript format yields (turns) and how each fails (one line naming the place)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

ROLES = ("user", "assistant", "system", "tool")
CLOCK_SKEW = timedelta(seconds=5)


@dataclass(frozen=True)
class TranscriptTurn:
    role: str
    content: str
    line: int  # 1-based line where the turn starts in the file (heading, element's `{`, entry's line)
    ts: datetime | None = None  # when it was said, when the transcript says
    msg_id: str | None = None  # the transcript's own id for the turn, when it has one
    reasoning: str | None = None


class TranscriptError(ValueError):
    """A transcript that cannot be ingested; str() is one line naming the file and line."""

    def __init__(self, message: str, line: int | None, source: str | None = None):
        super().__init__(message)
        self.message = message
        self.line = line
        self.source = source

    def __str__(self) -> str:
        where = self.source or ""
        if self.line is not None:
            where = f"{where} line {self.line}".strip()
        return f"{where}: {self.message}" if where else self.message


def line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def said_at(value: object, what: str, line: int, source: str) -> datetime | None:
    """A turn's time from ISO 8601 with a UTC offset (``Z`` included), in UTC; refused when it has
    no offset, is in the future or before 1970."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise TranscriptError(
            f"{what} has ts {json.dumps(value)[:40]}, expected ISO 8601 with a UTC offset", line, source
        )
    if moment > datetime.now(UTC) + CLOCK_SKEW or moment.year < 1970:
        raise TranscriptError(f"{what} has ts {value} in the future or before 1970", line, source)
    return moment.astimezone(UTC)


def unreadable(exc: BaseException) -> str:
    """Why valid-looking JSON could not be read, in a few words."""
    if isinstance(exc, RecursionError):
        return "nested too deep"
    return str(exc).split(";")[0][:120]


def json_type(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def preview(line: str, limit: int = 40) -> str:
    line = line.strip()
    return repr(line if len(line) <= limit else line[:limit] + "...")
