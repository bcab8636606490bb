"""A turn's words (``lexemes``, ``context_lexemes``) are kept in its row, not in the TOAST table.

BM25 reads the words of every candidate turn. A long turn's tsvector (a quarter of the LongMemEval
turns: over 2 kB, where a row's large values start to move out) was read through the TOAST index
and decompressed for each candidate: 0.06 ms a candidate, most of the leg's time on a question with
2,000 candidates. With storage MAIN, PostgreSQL moves the text out first and the words only when the
row would not fit in a page even so; the heap keeps the text out, as before.

Rows already stored keep their TOASTed words until they are rewritten (``VACUUM FULL
turns_pYYYY_MM``: an exclusive lock on that month while it runs).

Revision ID: 0033
"""

from alembic import op

revision = "0033"
down_revision = "0032"
branch_labels = None
depends_on = None


def _store(storage: str) -> None:
    for column in ("lexemes", "context_lexemes"):
        op.execute(f"ALTER TABLE turns ALTER COLUMN {column} SET STORAGE {storage}")  # every partition


def upgrade() -> None:
    _store("MAIN")


def downgrade() -> None:
    _store("EXTENDED")
