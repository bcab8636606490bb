"""Named SQL of the coding-session threads family."""

from sqlalchemy import text

# How far a thread's messages are turns: only ever forward, so a late or repeated run of the
# thread_index stage never makes messages count as unindexed again.
ADVANCE_INDEXED = text(
    "UPDATE coding_threads SET indexed_count = greatest(indexed_count, :n) WHERE row_id = :row"
)

# A search reads the most recent RANK_POOL (:pool) threads that match, found through indexes only (the
# full-text index, which holds the commit SHAs too so a hex prefix is a prefix query on it, OR'd
# with the trigram indexes of remote and branch), and ranks just those: ranking reads each
# thread's whole lexeme vector, so ranking every match of a common word would read them all. The
# query is written out where it is used, not taken from a CTE, so the planner sees a value it can
# probe the GIN index with.
QUERY = """(CASE WHEN :hex THEN plainto_tsquery('english', :q) || to_tsquery('simple', :sha_prefix)
            ELSE plainto_tsquery('english', :q) END)"""
PLACE = "(t.git_remote_url ILIKE :anywhere OR t.git_branch ILIKE :anywhere)"
SEARCH = text(f"""
WITH pool AS MATERIALIZED (
    SELECT t.row_id FROM coding_threads t
    WHERE t.namespace = :ns
      AND (t.owner = :owner OR t.visibility IN ('organization', 'public'))
      AND (t.lexemes @@ {QUERY} OR {PLACE})
    ORDER BY t.last_activity_at DESC
    LIMIT :pool
)
SELECT t.id, ts_rank(t.lexemes, {QUERY}) + CASE WHEN {PLACE} THEN 1 ELSE 0 END AS rank
FROM coding_threads t JOIN pool USING (row_id)
ORDER BY rank DESC, t.last_activity_at DESC
LIMIT :limit
""")
