"""Named SQL of the coding-session threads family."""

from sqlalchemy import text

# How far a thread's messages are turns: only ever forward, so a late or repeated run of the
# thread_index stage never makes messages count as unindexed again.
ADVANCE_INDEXED = text(
    "UPDATE coding_threads SET indexed_count = greatest(indexed_count, :n) WHERE row_id = :row"
)
