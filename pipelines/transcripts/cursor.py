"""Cursor's transcripts: the chat export (Markdown: a title, an ``_Exported on … from Cursor (…)_``
line, then ``**User**`` and ``**Cursor**`` sections each after a ``---`` line) and the agent
transcript of its hooks (JSON lines of ``{"role", "message": {"content": [blocks]}}``, read by
``json_lines``).

The export names no ids or times, so its turns are keyed by their place (``turn_msg_id``): an
export of the same chat made later adds only the new turns. In the agent transcript a user's words
sit in ``<user_query>`` (beside ``<timestamp>``, ``<attached_files>`` and other context); a turn
there is keyed by its line in the session file, so pieces of the file sent apart stay distinct."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

from pipelines.transcripts.common import TranscriptError, TranscriptTurn, said_at

ROLE_OF = {"**User**": "user", "**Cursor**": "assistant"}
_EXPORTED = re.compile(r"_Exported on .* from Cursor \([^)]*\)_")
_QUERY = re.compile(r"<user_query>(.*?)</user_query>", re.S)
_STAMP = re.compile(  # <timestamp>Tuesday, Apr 28, 2026, 10:15 AM (UTC+3)
    r"<timestamp>\w+, (\w{3}) (\d{1,2}), (\d{4}), (\d{1,2}):(\d{2}) ([AP]M) "
    r"\(UTC([+-]\d{1,2})?(?::?(\d{2}))?\)"
)
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


# --- the Markdown export ----------------------------------------------------------------------------


def looks_like_export(text: str) -> bool:
    """An ``_Exported on … from Cursor (…)_`` line near the top, or a first line that is a role mark."""
    head = [line.strip() for line in text.split("\n", 12)[:12] if line.strip()]
    return bool(head) and (head[0] in ROLE_OF or any(_EXPORTED.fullmatch(line) for line in head))


def parse_export(text: str, source: str) -> list[TranscriptTurn]:
    """A role mark counts only after a ``---`` line (or as the first line of the file), so a
    ``**User**`` line inside an answer stays in the answer. Sections that are empty (a reply that
    was only tool calls) are no turns."""
    turns: list[TranscriptTurn] = []
    section: tuple[str, int] | None = None
    body: list[str] = []
    previous = "---"  # the last non-blank line; the file's first line may be a role mark
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        mark = line.strip()
        if mark in ROLE_OF and previous == "---":
            _close(section, body, turns)
            section, body = (ROLE_OF[mark], number), []
        elif section is not None:
            body.append(line)
        if mark:
            previous = mark
    _close(section, body, turns)
    return turns


def _close(section: tuple[str, int] | None, body: list[str], turns: list[TranscriptTurn]) -> None:
    if section is None:
        return
    while body and not body[-1].strip():
        body.pop()
    if body and body[-1].strip() == "---":  # the separator before the next section
        body.pop()
    content = "\n".join(body).strip("\n")
    if content.strip():
        turns.append(TranscriptTurn(section[0], content, section[1]))


# --- the agent transcript (one JSON line) -----------------------------------------------------------


def is_entry(entry: dict) -> bool:
    role, message = entry.get("role"), entry.get("message")
    return "type" not in entry and isinstance(role, str) and isinstance(message, dict)


def turn(entry: dict, line: int, source: str) -> TranscriptTurn | None:
    role = entry["role"]
    if role not in ("user", "assistant"):
        return None
    content = entry["message"].get("content")
    blocks = [content] if isinstance(content, str) else content if isinstance(content, list) else []
    texts = [b if isinstance(b, str) else b.get("text") for b in blocks if isinstance(b, str) or _text(b)]
    text = "\n\n".join(t.strip() for t in texts if t.strip())
    said = None
    if role == "user":
        said = _said(text, line, source)
        queries = _QUERY.findall(text)
        text = "\n\n".join(q.strip() for q in queries) if queries else text
    text = text.strip().replace("\x00", "\ufffd")
    if not text:
        return None
    return TranscriptTurn(role, text, line, said, msg_id=f"line{line}")


def _text(block: object) -> bool:
    return isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)


def _said(text: str, line: int, source: str) -> datetime | None:
    """The time Cursor wrote beside the user's words (minutes, the user's zone), when it did."""
    m = _STAMP.search(text)
    if not m or m.group(1) not in _MONTHS:
        return None
    month, day, year, hour, minute, half, zone_h, zone_m = m.groups()
    hour_24 = int(hour) % 12 + (12 if half == "PM" else 0)
    offset = timedelta(hours=int(zone_h or 0))
    offset += timedelta(minutes=int(zone_m or 0)) * (-1 if offset < timedelta(0) else 1)
    try:
        zone = timezone(offset)
        moment = datetime(int(year), _MONTHS.index(month) + 1, int(day), hour_24, int(minute), tzinfo=zone)
        return said_at(moment.astimezone(UTC).isoformat(), "the user's <timestamp>", line, source)
    except (ValueError, OverflowError, TranscriptError):  # words in the content: no time, not no turn
        return None
