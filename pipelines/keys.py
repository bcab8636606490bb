"""Idempotency keys and derived ids, so one rule has one spelling. The keys built from an id that
the database draws in the same statement are spelled in that statement (``models.queries``)."""

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


def subject_id(subject: str) -> int:
    """The id in a stage run's subject, ``turn:<id>`` (written by ``models.queries.APPEND_TURN``,
    which draws the turn's id in the statement that stores it)."""
    return int(subject.split(":", 1)[1])
