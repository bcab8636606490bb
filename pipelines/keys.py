"""Every idempotency key and derived id is built here, so one rule has one spelling."""

import hashlib


def digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\x1f")  # a separator no part can fake by concatenation
    return h.hexdigest()


def derived_msg_id(thread_id: str, role: str, content: str) -> str:
    """A turn appended without msg_id: re-logging the same turn must not double the transcript."""
    return "h-" + digest(thread_id, role, content)[:32]


def embed_key(turn_id: int, text: str) -> str:
    return f"embed:{turn_id}:{digest(text)[:16]}"


def turn_subject(turn_id: int) -> str:
    return f"turn:{turn_id}"


def subject_id(subject: str) -> int:
    return int(subject.split(":", 1)[1])
