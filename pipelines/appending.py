"""The one write path of a turn, shared by conversation.append and the ingest stage: screen it,
cut its embedding text, and write it with ``models.queries.turns.APPEND_TURN`` (the turn, its thread, its
embedding row and run, in one statement). The caller wakes the embedding stage after the commit."""

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg

from models import partitions
from models.base import utcnow
from models.queries import turns as queries
from models.settings import get_settings
from models.stages import EMBEDDING
from pipelines import contexts, embedding, keys, looms, screening

STORED, DUPLICATE, LOGGING_DISABLED, DELETED = "stored", "duplicate", "logging_disabled", "deleted"
EXPIRED = "expired"  # said before the retention TTL's cutoff: it would be removed at once


@dataclass(frozen=True)
class NewTurn:
    namespace: str
    thread_id: str
    agent: str
    role: str
    content: str
    msg_id: str | None = None  # derived from the thread, role and content when not given
    reasoning: str | None = None
    name: str | None = None
    user_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    tokens: int | None = None
    ts: datetime | None = None  # when it was said; now when not given

    @property
    def key(self) -> str:
        return self.msg_id or keys.derived_msg_id(self.thread_id, self.role, self.content)


@dataclass(frozen=True)
class Written:
    outcome: str  # STORED, DUPLICATE, LOGGING_DISABLED or DELETED
    msg_id: str
    turn_id: int | None = None
    sensitivity: str | None = None
    embedding: str | None = None  # pending | shared | not_embedded, for a stored turn
    embedding_run_id: int | None = None  # the stage run to wake (the turn's own is its run_id)


def expired(said: datetime) -> bool:
    """A turn said then is past the retention TTL's cutoff: storing it, it would be removed at once."""
    days = get_settings().retention_conversations_days
    return bool(days) and said < partitions.retention_cutoff(utcnow(), days)


def write(conn: psycopg.Connection, turn: NewTurn) -> Written:
    """Write one turn on an autocommit connection (the statement is its own transaction)."""
    sensitivity = screening.screen(turn.content).level
    embed = embedding.embeddable(turn.role, sensitivity)
    text = embedding.embedding_text(turn.content, get_settings().embed_max_chars)
    said = turn.ts or utcnow()
    if expired(said):
        # A re-send of a turn the TTL removed (a capture hook that lost its place) stays removed.
        return Written(EXPIRED, turn.key)
    params = {
        "namespace": turn.namespace,
        "thread_id": turn.thread_id,
        "agent": turn.agent,
        "msg_id": turn.key,
        "role": turn.role,
        "content": turn.content,
        "reasoning": turn.reasoning,
        "name": turn.name,
        "user_id": turn.user_id,
        "run_id": turn.run_id,
        "metadata": json.dumps(turn.metadata),
        "tokens": turn.tokens,
        "sensitivity": sensitivity,
        "screened_with": screening.RULES_VERSION,
        "ts": said,
        "embed": embed,
        "said": embed,  # what the vector leg embeds is what has, and is, a lexical context
        "embed_text": text,
        "embed_digest": keys.digest(text),
        "stage": EMBEDDING.name,
        "subject_prefix": EMBEDDING.subject_prefix,
        "interaction": looms.interaction_id(turn.namespace, turn.thread_id, turn.run_id),
        "now": utcnow(),
        "short": contexts.SHORT_CHARS,
    }
    try:
        answer = conn.execute(queries.APPEND_TURN, params).fetchone()
    except psycopg.errors.CheckViolation:
        # No partition holds that month yet (imported history, a first write after a long stop):
        # the statement wrote nothing; make the month and write again.
        partitions.ensure(conn, said)
        answer = conn.execute(queries.APPEND_TURN, params).fetchone()
    assert answer is not None  # its top SELECT, of subqueries alone, answers exactly one row
    recording_on, deleted, turn_id, embedding_run_id = answer
    if not recording_on:
        return Written(LOGGING_DISABLED, turn.key)
    if deleted:
        return Written(DELETED, turn.key)
    if turn_id is None:
        return Written(DUPLICATE, turn.key)
    shared_or_not = "shared" if embed else "not_embedded"
    embedded = "pending" if embedding_run_id else shared_or_not
    return Written(STORED, turn.key, turn_id, sensitivity, embedded, embedding_run_id)
