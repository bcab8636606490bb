"""JSON-lines transcripts, one entry a line: Claude Code session files (entries with a ``type``),
Codex rollout files (records with a ``type`` and a ``payload``) and Cursor agent transcripts
(entries with a ``role``), told apart line by line. A piece of a
session file (a capture hook sends the lines after the last it delivered) names the line it starts
at (``first_line``), so errors name the file's line and Cursor turns keep their keys."""

from __future__ import annotations

import json

from pipelines.transcripts import claude_code, codex, cursor
from pipelines.transcripts.common import TranscriptError, TranscriptTurn, json_type, unreadable


def looks_like(text: str) -> bool:
    """The first line is a JSON object (a JSON transcript is an array)."""
    return text.lstrip()[:1] == "{"


def parse(text: str, source: str, first_line: int = 1) -> list[TranscriptTurn]:
    turns: list[TranscriptTurn] = []
    carried = claude_code.Carried()
    for number, raw in enumerate(text.split("\n"), start=first_line):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise TranscriptError(f"invalid JSON line: {exc.msg}", number, source) from exc
        except (ValueError, RecursionError) as exc:  # a number past Python's digit limit, deep nesting
            raise TranscriptError(f"JSON line Loom cannot read: {unreadable(exc)}", number, source) from exc
        if not isinstance(entry, dict):
            raise TranscriptError(f"entry is {json_type(entry)}, expected an object", number, source)
        if cursor.is_entry(entry):
            turn = cursor.turn(entry, number, source)
        elif codex.is_record(entry):
            turn = codex.turn(entry, number, source)
        elif isinstance(entry.get("type"), str):
            turn = claude_code.turn(entry, carried, number, source)
        else:
            raise TranscriptError(
                'entry has neither "type" (Claude Code) nor "role" (Cursor) '
                "(a JSON transcript must be an array of turns)",
                number,
                source,
            )
        if turn is not None:
            turns.append(turn)
    return turns
