"""Parse an exported conversation transcript (Markdown or JSON) into turns.

Pure and stdlib-only: `loom ingest-transcript` feeds the result to the normal append path.

Markdown format: sections headed by a line that is exactly `# <role>` (role one of ROLES,
case-insensitive, trailing spaces allowed). Any other `# ...` line, e.g. `# Notes` or `# users`, is
NOT a heading: it is content, so a Markdown title inside an answer stays in the answer. The flip
side: a line that is exactly `# user` always starts a new turn, even inside a code fence (fences
are not tracked, so an unclosed fence cannot silently swallow the rest of the file); use the JSON
format for such content. Non-blank text before the first role heading is an error.

JSON format: the first non-blank character is `[` (or `{`, which is then reported as "not an
array"); the document is an array of {"role": ..., "content": ...} objects, with an optional "ts"
(when it was said: ISO 8601 with a UTC offset, not in the future), other keys ignored.

Line endings are normalised to "\\n" in the stored content; a leading UTF-8 BOM is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

ROLES = ("user", "assistant", "system", "tool")

_HEADING = re.compile(r"#[ \t]+(\w+)[ \t]*", re.ASCII)
_JSON_WS = re.compile(r"[ \t\n\r]*")


@dataclass(frozen=True)
class TranscriptTurn:
    role: str
    content: str
    line: int  # 1-based line where the turn starts in the file (heading or the element's `{`)
    ts: datetime | None = None  # when it was said, when the transcript says


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


def read_transcript(path: str) -> list[TranscriptTurn]:
    """Read and parse a transcript file; every failure (I/O, encoding, format) is a TranscriptError."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise TranscriptError(f"cannot read file: {exc.strerror or exc}", None, path) from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TranscriptError("not valid UTF-8 text", line, path) from exc
    return parse_transcript(text, source=path)


def parse_transcript(text: str, source: str = "<transcript>") -> list[TranscriptTurn]:
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise TranscriptError("empty file, no turns", None, source)
    nul = text.find("\x00")
    if nul >= 0:  # Postgres text columns refuse NUL (JSON \u0000 escapes are checked per turn)
        raise TranscriptError("NUL byte in the transcript", _line_at(text, nul), source)
    if text.lstrip()[0] in "[{":
        turns = _parse_json(text, source)
    else:
        turns = _parse_markdown(text, source)
    if not turns:
        raise TranscriptError("no turns found", None, source)
    return turns


def default_thread_id(source_name: str, turns: list[TranscriptTurn]) -> str:
    """Stable thread id from the file's base name and first turn: a grown file maps to the same thread."""
    if not turns:
        raise ValueError("default_thread_id needs at least one turn")
    first = turns[0]
    return "transcript-" + _digest(os.path.basename(source_name), first.role, first.content)[:16]


def turn_msg_id(thread_id: str, index: int, turn: TranscriptTurn) -> str:
    """Stable per-turn id so re-ingesting the same file is deduplicated by the append path.

    The content hash means an edited turn gets a new id (stored, not silently dropped as a duplicate).
    """
    return f"t{index:05d}-{_digest(thread_id, turn.role, turn.content)[:12]}"


def _digest(*parts: str) -> str:
    # NUL cannot occur in parsed content, so it is an unambiguous separator.
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


def _line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# --- Markdown ---------------------------------------------------------------------------------------


def _heading_role(line: str) -> str | None:
    m = _HEADING.fullmatch(line)
    if m and m.group(1).lower() in ROLES:
        return m.group(1).lower()
    return None


def _parse_markdown(text: str, source: str) -> list[TranscriptTurn]:
    turns: list[TranscriptTurn] = []
    section: tuple[str, int] | None = None  # (role, heading line) of the open section
    body: list[str] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        role = _heading_role(line)
        if role is not None:
            if section is not None:
                turns.append(_close_section(*section, body, source))
            section, body = (role, number), []
        elif section is not None:
            body.append(line)
        elif line.strip():
            hint = " (not a role heading)" if line.startswith("#") else ""
            raise TranscriptError(
                f"text before the first role heading{hint}: {_preview(line)}; "
                f"expected a line like '# user' (roles: {', '.join(ROLES)})",
                number,
                source,
            )
    if section is not None:
        turns.append(_close_section(*section, body, source))
    return turns


def _close_section(role: str, line: int, body: list[str], source: str) -> TranscriptTurn:
    # Only whole blank lines are trimmed, so the first line's indentation (e.g. code) is kept.
    first, last = 0, len(body)
    while first < last and not body[first].strip():
        first += 1
    while last > first and not body[last - 1].strip():
        last -= 1
    if first == last:
        raise TranscriptError(f"empty '# {role}' section", line, source)
    return TranscriptTurn(role, "\n".join(body[first:last]), line)


def _preview(line: str, limit: int = 40) -> str:
    line = line.strip()
    return repr(line if len(line) <= limit else line[:limit] + "...")


# --- JSON -------------------------------------------------------------------------------------------


def _parse_json(text: str, source: str) -> list[TranscriptTurn]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TranscriptError(f"invalid JSON: {exc.msg}", exc.lineno, source) from exc
    if not isinstance(doc, list):
        raise TranscriptError(
            f"JSON transcript must be an array of turns, got {_json_type(doc)}",
            _line_at(text, _skip_ws(text, 0)),
            source,
        )
    if not doc:
        raise TranscriptError("empty JSON array, no turns", _line_at(text, _skip_ws(text, 0)), source)

    turns = []
    for index, (value, offset, members) in enumerate(_array_elements(text)):
        line = _line_at(text, offset)
        if not isinstance(value, dict):
            raise TranscriptError(f"turn {index} is {_json_type(value)}, expected an object", line, source)
        role_line = _line_at(text, members.get("role", offset))
        content_line = _line_at(text, members.get("content", offset))
        role = value.get("role")
        if role is None:
            raise TranscriptError(f'turn {index} has no "role"', role_line, source)
        if not isinstance(role, str) or role.lower() not in ROLES:
            roles = ", ".join(ROLES)
            raise TranscriptError(
                f"turn {index} has unknown role {json.dumps(role)} (roles: {roles})", role_line, source
            )
        content = value.get("content")
        if "content" not in value:
            raise TranscriptError(f'turn {index} has no "content"', content_line, source)
        if not isinstance(content, str):
            raise TranscriptError(
                f"turn {index} has {_json_type(content)} as content, expected a string", content_line, source
            )
        if not content.strip():
            raise TranscriptError(f"turn {index} has empty content", content_line, source)
        if "\x00" in content:  # from a \u0000 escape; Postgres text refuses NUL
            raise TranscriptError(f"turn {index} has a NUL character in its content", content_line, source)
        ts = _said_at(value.get("ts"), index, _line_at(text, members.get("ts", offset)), source)
        turns.append(TranscriptTurn(role.lower(), content, line, ts))
    return turns


CLOCK_SKEW = timedelta(seconds=5)


def _said_at(value: object, index: int, line: int, source: str) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise TranscriptError(
            f"turn {index} has ts {json.dumps(value)[:40]}, expected ISO 8601 with a UTC offset", line, source
        )
    if moment > datetime.now(UTC) + CLOCK_SKEW or moment.year < 1970:
        raise TranscriptError(f"turn {index} has ts {value} in the future or before 1970", line, source)
    return moment.astimezone(UTC)


def _json_type(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _skip_ws(text: str, pos: int) -> int:
    return _JSON_WS.match(text, pos).end()


def _array_elements(text: str) -> Iterator[tuple[object, int, dict[str, int]]]:
    """Walk an already-validated top-level array, yielding (element, offset, member value offsets).

    json.loads keeps no positions, so this second pass re-decodes each value with raw_decode only to
    learn where elements (and the members of object elements) start, for error line numbers.
    """
    decode = json.JSONDecoder().raw_decode
    pos = _skip_ws(text, 0) + 1  # past "["
    while True:
        pos = _skip_ws(text, pos)
        if text[pos] == "]":
            return
        start = pos
        members: dict[str, int] = {}
        value: object
        if text[pos] == "{":
            obj: dict[str, object] = {}
            pos += 1
            while True:
                pos = _skip_ws(text, pos)
                if text[pos] == "}":
                    pos += 1
                    break
                key, pos = decode(text, pos)
                pos = _skip_ws(text, _skip_ws(text, pos) + 1)  # past ":"
                members[key] = pos
                obj[key], pos = decode(text, pos)  # last duplicate key wins, as in json.loads
                pos = _skip_ws(text, pos)
                if text[pos] == ",":
                    pos += 1
            value = obj
        else:
            value, pos = decode(text, pos)
        yield value, start, members
        pos = _skip_ws(text, pos)
        if text[pos] == ",":
            pos += 1
