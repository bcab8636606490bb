"""A turn's words (``lexemes``, ``context_lexemes``) are kept in its row, not in the TOAST table.

BM25 reads the words of every candidate turn. A long turn's tsvector (a quarter of the LongMemEval
turns: over 2 kB, where the default target moves a row's large values out) was read through the
TOAST index and decompressed for each candidate: 0.06 ms a candidate, most of the leg's time on a
question with 2,000 candidates. Storage MAIN keeps them in the row (the text goes out first), and a
partition's ``toast_tuple_target`` of 8160 (the most a page takes) lets a row of up to a page stay
whole; ``models.partitions`` creates new months so.

Rows already stored keep their TOASTed words until their partition is rewritten: ``VACUUM FULL
turns_pYYYY_MM`` (an exclusive lock on that month while it runs) brings a month's rows in.

Revision ID: 0033
"""

from alembic import op

revision = "0033"
down_revision = "0032"
branch_labels = None
depends_on = None

# Each partition's name as ALTER TABLE takes it (regclass quotes it when needed).
PARTITIONS = "SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = 'turns'::regclass"


def _store(storage: str, target: str) -> None:
    for column in ("lexemes", "context_lexemes"):
        op.execute(f"ALTER TABLE turns ALTER COLUMN {column} SET STORAGE {storage}")  # every partition
    for (partition,) in op.get_bind().exec_driver_sql(PARTITIONS).all():
        op.execute(f"ALTER TABLE {partition} {target}")


def upgrade() -> None:
    _store("MAIN", "SET (toast_tuple_target = 8160)")


def downgrade() -> None:
    _store("EXTENDED", "RESET (toast_tuple_target)")
