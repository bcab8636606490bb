"""A said turn's lexical context: the words of the previous said turn of its thread when that turn
is short, which the lexical leg counts as the turn's own (issue 23, ``pipelines.contexts``)

``turns.context_lexemes`` (NULL: none) and ``turns.context_length`` (its words, BM25's document
length beside ``lexical_length``), with a GIN index of the same predicate as
ix_turns_namespace_lexemes (migration 0031), so that candidates are read from either index.
``threads.said_msg_id``, ``said_lexemes`` and ``said_context``: the thread's latest said turn (its
message, its words when short, else empty, and its own context), which conversation.append reads
under the thread row's lock to give the next turn its context in the same statement.

Turns written before this have no context: the contexts stage fills them (``loom passes run
contexts``; the scheduler fires that pass when it starts).

Revision ID: 0032
"""

from alembic import op

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None

INDEXED = (
    "(role IN ('user', 'assistant') OR (role = 'system' AND metadata ? 'compacted_from')) "
    "AND deleted_at IS NULL AND sensitivity <> 'high'"
)


def upgrade() -> None:
    op.execute("ALTER TABLE turns ADD COLUMN context_lexemes tsvector")
    op.execute("ALTER TABLE turns ADD COLUMN context_length integer NOT NULL DEFAULT 0")
    op.execute(
        f"CREATE INDEX ix_turns_namespace_context ON turns USING gin (namespace, context_lexemes) WHERE {INDEXED}"
    )
    op.execute(
        "ALTER TABLE threads ADD COLUMN said_msg_id varchar(128), ADD COLUMN said_lexemes tsvector, "
        "ADD COLUMN said_context tsvector"
    )


def downgrade() -> None:
    op.execute(
        "ALTER TABLE threads DROP COLUMN said_context, DROP COLUMN said_lexemes, DROP COLUMN said_msg_id"
    )
    op.execute("DROP INDEX ix_turns_namespace_context")
    op.execute("ALTER TABLE turns DROP COLUMN context_length")
    op.execute("ALTER TABLE turns DROP COLUMN context_lexemes")
