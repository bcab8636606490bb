"""Claude Code session files (JSON lines, as Claude Code writes them under ``~/.claude/projects/``;
read by ``json_lines``): each user or assistant entry with text is one turn, its ``uuid`` the turn's
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

from dataclasses import dataclass

from models.conversation import MSG_ID_MAX
from pipelines.transcripts.common import TranscriptError, TranscriptTurn, said_at

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


@dataclass
class Carried:
    """Thinking read from text-less entries of one API message, waiting for that message's text."""

    message_id: object = None
    reasoning: str = ""


def turn(entry: dict, carried: Carried, line: int, source: str) -> TranscriptTurn | None:
    """One entry as a turn, or None when it carries no conversation text (its thinking is carried)."""
    message = entry.get("message")
    message_id = message.get("id") if isinstance(message, dict) else None
    if message_id is None or message_id != carried.message_id:
        carried.message_id, carried.reasoning = message_id, ""
    uuid = entry.get("uuid")
    conversational = entry.get("type") in ("user", "assistant") and not any(entry.get(f) for f in SKIP_FLAGS)
    if not conversational or not isinstance(message, dict):
        return None
    texts, thinking = _parts(message.get("content"))
    role = message.get("role") or entry["type"]
    content = _join(texts)
    if not content or not isinstance(uuid, str) or not uuid or role not in ("user", "assistant"):
        if message_id is not None:
            carried.reasoning = _join([carried.reasoning, *thinking])
        return None
    if content.startswith(NOISE_PREFIXES):
        return None
    if len(uuid) > MSG_ID_MAX:
        raise TranscriptError(
            f"entry has a uuid of {len(uuid)} characters, more than {MSG_ID_MAX}", line, source
        )
    reasoning = _join([carried.reasoning, *thinking]) if role == "assistant" else ""
    carried.reasoning = ""
    ts = said_at(entry.get("timestamp"), f"entry {uuid[:40]!r}", line, source)
    return TranscriptTurn(role, content, line, ts, msg_id=uuid, reasoning=reasoning or None)


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
