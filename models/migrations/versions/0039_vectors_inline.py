"""The embedding rows keep their vector inline: an exact scan reads the heap, not the TOAST table

pgvector's type is stored ``external``: when a row passes PostgreSQL's TOAST threshold (about 2 kB),
the toaster moves its largest such value out of line, and a 384-dimension vector (1.5 kB) is larger
than most turns' compressed text. Two thirds of the LongMemEval file's vectors lived in the TOAST
table, so an exact scan of a namespace fetched every other vector through the TOAST index (26 ms
for 10,866 rows instead of 8; bench/README.md). ``main`` storage keeps the vector in the row unless
nothing else can make it fit: the text goes out of line instead, which the vector legs never read.

Vectors already moved out are written back inline (PostgreSQL 17 and later tell which; before 17,
every row with a vector is rewritten once).

Revision ID: 0039
"""

from alembic import op

revision = "0039"
down_revision = "0038"
branch_labels = None
depends_on = None

# The same values, recomputed: the toaster then places them anew under the column's storage.
REWRITE = "UPDATE embeddings SET vector = vector::real[]::vector WHERE vector IS NOT NULL"


def upgrade() -> None:
    op.execute("ALTER TABLE embeddings ALTER COLUMN vector SET STORAGE MAIN")
    version = op.get_bind().exec_driver_sql("SHOW server_version_num").scalar_one()
    if int(version) >= 170000:
        op.execute(REWRITE + " AND pg_column_toast_chunk_id(vector) IS NOT NULL")
    else:
        op.execute(REWRITE)


def downgrade() -> None:
    op.execute("ALTER TABLE embeddings ALTER COLUMN vector SET STORAGE EXTERNAL")
