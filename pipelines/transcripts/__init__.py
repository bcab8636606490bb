"""Parse an exported conversation transcript into turns: Markdown (``# user`` sections), a JSON array
of ``{role, content, ts?}``, a Claude Code, Codex or Cursor session file (JSON lines), or Cursor's chat
export (``**User**`` / ``**Cursor**`` sections). Each format is a module of this package; this one
tells them apart and names the turns.

Pure (no I/O but reading a file): the ingest stage (and ``loom ingest-transcript --dry-run``) feed
the result to the write path of conversation.append. Line endings are normalised to "\\n" in the
stored content; a leading UTF-8 BOM is ignored.
"""

from __future__ import annotations

import hashlib
import os

from pipelines.transcripts import cursor, json_array, json_lines, markdown
from pipelines.transcripts.common import ROLES, TranscriptError, TranscriptTurn, line_at

__all__ = [
    "ROLES",
    "TranscriptError",
    "TranscriptTurn",
    "default_thread_id",
    "in_pieces",
    "looks_like_a_transcript",
    "parse_transcript",
    "read_transcript",
    "turn_msg_id",
]


def looks_like_a_transcript(text: str) -> bool:
    """The cheap check of the write endpoint: the first non-blank character of one of the formats."""
    return text.lstrip("\ufeff \t\r\n")[:1] in ("#", "[", "{", "*", "_")


def in_pieces(text: str) -> bool:
    """Whether the text may be a piece of a longer file (``first_line`` > 1): JSON lines only."""
    return json_lines.looks_like(text.removeprefix("\ufeff"))


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


def parse_transcript(text: str, source: str = "<transcript>", first_line: int = 1) -> list[TranscriptTurn]:
    """The turns of a transcript; ``first_line`` is the line of the whole file that a piece of a
    JSON-lines session file starts at (other formats come whole)."""
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise TranscriptError("empty file, no turns", None, source)
    nul = text.find("\x00")
    if nul >= 0:  # Postgres text columns refuse NUL (JSON \u0000 escapes are checked per turn)
        raise TranscriptError("NUL byte in the transcript", line_at(text, nul), source)
    if json_lines.looks_like(text):
        return json_lines.parse(text, source, first_line)  # a session that said nothing yet is no error
    if first_line != 1:
        raise TranscriptError("only a JSON-lines session file is sent in pieces (first_line)", None, source)
    if text.lstrip()[0] == "[":
        turns = json_array.parse(text, source)
    elif cursor.looks_like_export(text):
        turns = cursor.parse_export(text, source)
    else:
        turns = markdown.parse(text, source)
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
    """Stable per-turn id so re-ingesting the same file is deduplicated by the append path: the
    transcript's own id when it has one, else from the thread, the turn's place and its text (an
    edited turn gets a new id: stored, not silently dropped as a duplicate)."""
    if turn.msg_id:
        return turn.msg_id
    return f"t{index:05d}-{_digest(thread_id, turn.role, turn.content)[:12]}"


def _digest(*parts: str) -> str:
    # NUL cannot occur in parsed content, so it is an unambiguous separator.
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()
