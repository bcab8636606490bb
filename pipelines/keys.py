"""Digests and derived ids, so one rule has one spelling. A stage run's subject and key are its
stage's (``models.stages.Stage``)."""

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
