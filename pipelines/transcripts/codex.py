"""Codex session rollout files (JSON lines under ``$CODEX_HOME/sessions/YYYY/MM/DD/``; read by
``json_lines``): each line a ``{"timestamp", "type", "payload"}`` record. The conversation is the
``response_item`` messages of the user and the assistant: each with text is one turn, said at the
line's ``timestamp`` and keyed by its line in the file (``line<N>``: a piece of the file sent apart
names its first line, and a resumed session appends to the same file), so the file ingested again,
whole or in pieces, adds only what is new.

Left out: the harness's own user messages (the environment context, AGENTS.md and skill
instructions: ``content_item_kinds`` other than ``user.text`` in Codex 0.171, a known prefix in
older files), developer and system messages, the assistant's compaction output, tool calls and
their output, reasoning, events (which repeat the messages) and every record type Codex adds later."""

from __future__ import annotations

from pipelines.transcripts.common import TranscriptTurn, said_at

ROLES = ("user", "assistant")
TEXT_TYPES = ("input_text", "output_text", "text")
HARNESS_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions",
)


def is_record(entry: dict) -> bool:
    """A line of a rollout file: a wrapped record, or a line of the bare format Codex wrote until
    mid-2025 (its session line, state lines, and response items without a wrapper)."""
    wrapped = isinstance(entry.get("type"), str) and isinstance(entry.get("payload"), dict)
    legacy_meta = "type" not in entry and ("record_type" in entry or {"id", "timestamp"} <= entry.keys())
    legacy_item = entry.get("type") == "message" and "role" in entry and "content" in entry
    return wrapped or legacy_meta or legacy_item


def _wrapped(entry: dict) -> dict:
    """A bare response item as the record that wraps it now."""
    if "payload" in entry or entry.get("type") != "message":
        return entry
    return {"type": "response_item", "timestamp": entry.get("timestamp"), "payload": entry}


def turn(entry: dict, line: int, source: str) -> TranscriptTurn | None:
    entry = _wrapped(entry)
    payload = entry.get("payload")
    if not isinstance(payload, dict):
        return None
    if (
        entry["type"] != "response_item"
        or payload.get("type") != "message"
        or payload.get("role") not in ROLES
    ):
        return None
    if (entry.get("metadata") or {}).get("compaction_output"):
        return None
    kinds = (payload.get("internal_chat_message_metadata_passthrough") or {}).get("content_item_kinds")
    if payload["role"] == "user" and isinstance(kinds, list) and kinds and set(kinds) != {"user.text"}:
        return None
    content = payload.get("content")
    parts = (
        [c.get("text") for c in content if isinstance(c, dict) and c.get("type") in TEXT_TYPES]
        if isinstance(content, list)
        else []
    )
    text = "\n\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip()).replace("\x00", "\ufffd")
    if not text or (payload["role"] == "user" and text.startswith(HARNESS_PREFIXES)):
        return None
    ts = said_at(entry.get("timestamp"), f"line {line}", line, source)
    return TranscriptTurn(payload["role"], text, line, ts, msg_id=f"line{line}")
