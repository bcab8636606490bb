"""Claude Code session files (JSON lines, one entry per line, as Claude Code writes them under
``~/.claude/projects/``): each user or assistant entry with text is one turn, its ``uuid`` the turn's
msg_id and its ``timestamp`` the turn's time, so a session file ingested again, whole or in pieces
(the Stop hook sends only the lines after the last it delivered), adds only what is new.

Only ``text`` blocks become content; assistant ``thinking`` blocks become reasoning. Claude Code
writes one entry per content block, so an API message's thinking usually sits in its own text-less
entry just before the text: it is carried to the next text entry of the same message (``message.id``).
Tool calls, tool results and images are left out. Entries that are not the conversation proper are
skipped: injected context (``isMeta``), subagent chains (``isSidechain``), the ``/compact`` summary,
slash-command plumbing and interruption markers. A file of such entries only holds no turns, and
that is not an error (a session may not have said anything yet)."""

from __future__ import annotations

import json

from pipelines.transcripts.common import TranscriptError, TranscriptTurn, json_type, said_at

# Entries that are not part of the conversation proper: injected context, subagent chains, /compact.
SKIP_FLAGS = ("isMeta", "isSidechain", "isCompactSummary")
# Slash-command plumbing and interruption markers that Claude Code writes as user text.
NOISE_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "[Request interrupted by user",
)


def looks_like(text: str) -> bool:
    """The first line is a JSON object: JSON lines (a JSON transcript is an array)."""
    return text.lstrip()[:1] == "{"


def parse(text: str, source: str) -> list[TranscriptTurn]:
    turns: list[TranscriptTurn] = []
    carried_id, carried = None, ""
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise TranscriptError(f"invalid JSON line: {exc.msg}", number, source) from exc
        if not isinstance(entry, dict):
            raise TranscriptError(f"entry is {json_type(entry)}, expected an object", number, source)
        if not isinstance(entry.get("type"), str):
            raise TranscriptError(
                'entry has no "type": not a Claude Code session file '
                "(a JSON transcript must be an array of turns)",
                number,
                source,
            )
        message = entry.get("message")
        message_id = message.get("id") if isinstance(message, dict) else None
        if message_id is None or message_id != carried_id:
            carried_id, carried = message_id, ""
        turn = _turn(entry, carried, number, source)
        if turn is not None:
            turns.append(turn)
            carried = ""
        elif message_id is not None and _conversational(entry):
            carried = _join([carried, *_parts(message.get("content"))[1]])
    return turns


def _conversational(entry: dict) -> bool:
    return entry.get("type") in ("user", "assistant") and not any(entry.get(f) for f in SKIP_FLAGS)


def _turn(entry: dict, carried_reasoning: str, line: int, source: str) -> TranscriptTurn | None:
    """One entry as a turn, or None when it carries no conversation text."""
    message, uuid = entry.get("message"), entry.get("uuid")
    if not _conversational(entry) or not isinstance(message, dict) or not isinstance(uuid, str) or not uuid:
        return None
    role = message.get("role") or entry["type"]
    if role not in ("user", "assistant"):
        return None
    texts, thinking = _parts(message.get("content"))
    content = _join(texts)
    if not content or content.startswith(NOISE_PREFIXES):
        return None
    reasoning = _join([carried_reasoning, *thinking]) if role == "assistant" else ""
    ts = said_at(entry.get("timestamp"), f"entry {uuid[:40]!r}", line, source)
    return TranscriptTurn(role, content, line, ts, msg_id=uuid[:256], reasoning=reasoning or None)


def _parts(content: object) -> tuple[list[str], list[str]]:
    """Split message content into (text parts, thinking parts); tool calls/results and images are dropped."""
    if isinstance(content, str):
        return [content], []
    texts: list[str] = []
    thinking: list[str] = []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "thinking" and isinstance(block.get("thinking"), str):
                thinking.append(block["thinking"])
    return texts, thinking


def _join(parts: list[str]) -> str:
    # PostgreSQL text cannot hold NUL: mark it instead of losing the turn.
    return "\n\n".join(p.strip() for p in parts if p.strip()).replace("\x00", "\ufffd")
