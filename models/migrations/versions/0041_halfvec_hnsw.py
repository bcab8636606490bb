"""The turns' vector index holds half-precision vectors and twice the links: recall that holds at
scale

At 1,000,000 turns the index as 0001 built it (single precision, m 16) reached 0.874 of the exact
top 10 at ef_search 100, and no ef_search reached 0.95: the graph, not the walk, was the limit. With
m 32 the same walk finds more of the nearest (200,000 turns, ef_search 100: 0.942 → 0.980), and
half-precision vectors (halfvec; an embedding's cosine moves by about 1e-3) make that index some
35 % smaller than the single-precision one at m 16, and its walks no slower (bench/index_params.py).
The column keeps single precision: the exact scan of a small scope, the similarity a hit reports
and the re-embedding pass read it.

The index is on the expression ``vector::halfvec(N)``, N the column's own dimensions (read from the
catalog: the embedder's width when 0001 ran). ``pipelines.search`` orders by that same expression.
Built CONCURRENTLY beside the old one, which is dropped only once the new one is valid, so searches
and appends go on meanwhile (at 1,000,000 vectors the build takes some 17 minutes here, as the
single-precision m 16 one did). Ingest does not measurably slow: ``bench/ingest.py --turns 2000``
run A B A B against the m 16 index gave 69.2 and 73.0 turns/s against 71.4 and 67.8.

Revision ID: 0041
"""

from alembic import op
from sqlalchemy import text

revision = "0041"
down_revision = "0040"
branch_labels = None
depends_on = None

OLD, NEW = "ix_embeddings_vector_hnsw", "ix_embeddings_halfvec_hnsw"


def upgrade() -> None:
    dimensions = (
        op.get_bind()
        .execute(
            text(
                "SELECT atttypmod FROM pg_attribute "
                "WHERE attrelid = 'embeddings'::regclass AND attname = 'vector'"
            )
        )
        .scalar_one()
    )
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {NEW}")  # an interrupted build's leftover
        op.execute(
            f"CREATE INDEX CONCURRENTLY {NEW} ON embeddings USING hnsw "
            f"((vector::halfvec({int(dimensions)})) halfvec_cosine_ops) WITH (m = 32, ef_construction = 64)"
        )
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {OLD}")


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {OLD}")
        op.execute(f"CREATE INDEX CONCURRENTLY {OLD} ON embeddings USING hnsw (vector vector_cosine_ops)")
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {NEW}")
