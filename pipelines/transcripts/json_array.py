"""JSON transcripts: an array of {"role": ..., "content": ...} objects, with an optional "ts" (when
it was said: ISO 8601 with a UTC offset, not in the future), other keys ignored."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from pipelines.transcripts.common import (
    ROLES,
    TranscriptError,
    TranscriptTurn,
    json_type,
    line_at,
    said_at,
    unreadable,
)

_JSON_WS = re.compile(r"[ \t\n\r]*")


def parse(text: str, source: str) -> list[TranscriptTurn]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TranscriptError(f"invalid JSON: {exc.msg}", exc.lineno, source) from exc
    except (ValueError, RecursionError) as exc:  # a number past Python's digit limit, deep nesting
        raise TranscriptError(f"JSON Loom cannot read: {unreadable(exc)}", None, source) from exc
    if not isinstance(doc, list):
        raise TranscriptError(
            f"JSON transcript must be an array of turns, got {json_type(doc)}",
            line_at(text, _skip_ws(text, 0)),
            source,
        )
    if not doc:
        raise TranscriptError("empty JSON array, no turns", line_at(text, _skip_ws(text, 0)), source)

    turns = []
    for index, (value, offset, members) in enumerate(_array_elements(text)):
        line = line_at(text, offset)
        if not isinstance(value, dict):
            raise TranscriptError(f"turn {index} is {json_type(value)}, expected an object", line, source)
        role_line = line_at(text, members.get("role", offset))
        content_line = line_at(text, members.get("content", offset))
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
                f"turn {index} has {json_type(content)} as content, expected a string", content_line, source
            )
        if not content.strip():
            raise TranscriptError(f"turn {index} has empty content", content_line, source)
        if "\x00" in content:  # from a \u0000 escape; Postgres text refuses NUL
            raise TranscriptError(f"turn {index} has a NUL character in its content", content_line, source)
        ts = said_at(value.get("ts"), f"turn {index}", line_at(text, members.get("ts", offset)), source)
        turns.append(TranscriptTurn(role.lower(), content, line, ts))
    return turns


def _skip_ws(text: str, pos: int) -> int:
    matched = _JSON_WS.match(text, pos)
    assert matched is not None  # it matches the empty string too
    return matched.end()


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
