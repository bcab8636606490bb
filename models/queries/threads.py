"""Named SQL of the threads family: a conversation thread's own row (its title, its metadata)."""

from sqlalchemy import text

from models.queries import runs_of
from models.stages import COMPACTION, TITLING

# A title a person set meanwhile is never overwritten, nor a deleted thread titled.
SET_TITLE = text("UPDATE threads SET title = :title WHERE id = :id AND title IS NULL AND deleted_at IS NULL")

# A coding-session thread's conversation copy carries the title its client set (the titler never
# picks a titled thread); a title changed on the client replaces it.
ADOPT_TITLE = text("""
UPDATE threads SET title = :title
WHERE namespace = :namespace AND thread_id = :thread_id AND deleted_at IS NULL
  AND title IS DISTINCT FROM :title
""")

# Untitled for good: the metadata mark keeps the titler pass from asking again (new metadata from
# conversation.update replaces it).
MARK_TITLE_REFUSED = text(
    "UPDATE threads SET metadata = metadata || jsonb_build_object(CAST(:mark AS text), true) WHERE id = :id"
)

# The titler pass's pick: untitled live threads of recording namespaces, active since :since with
# :min_turns turns, not marked refused, and not asked as they stand (no title run since their last
# turn but a refusal: a thread whose mark new metadata replaced is asked once more). ``newest`` and
# ``refusals`` (the thread's refused runs) go into the request's version. Newest first, :limit.
TITLE_CANDIDATES = text(f"""
SELECT th.id, th.metadata,
       (SELECT max(t.id) FROM turns t
        WHERE t.namespace = th.namespace AND t.thread_id = th.thread_id AND t.deleted_at IS NULL) AS newest,
       (SELECT count(*) FROM stage_runs r
        WHERE {runs_of(TITLING, "th.id")} AND r.reason = ANY(:refusals)) AS refusals
FROM threads th
JOIN namespaces n ON n.name = th.namespace AND n.conversation_logging_enabled
WHERE th.title IS NULL AND th.deleted_at IS NULL AND NOT th.metadata ? :mark
  AND th.last_turn_at >= :since AND th.turn_count >= :min_turns
  AND NOT EXISTS (SELECT FROM stage_runs r
                  WHERE {runs_of(TITLING, "th.id")}
                    AND r.created_at >= th.last_turn_at AND NOT coalesce(r.reason, '') = ANY(:refusals))
ORDER BY th.last_turn_at DESC
LIMIT :limit
""")


# --- compaction --------------------------------------------------------------------------------

# A compaction's window became one summary turn: the thread counts that many turns fewer.
SHRINK_TURN_COUNT = text("UPDATE threads SET turn_count = greatest(turn_count - :gone, 0) WHERE id = :id")

# The newest live turn of one agent's transcript of a thread: what a compaction request is for (a
# new turn makes a new request).
NEWEST_TURN_OF_AGENT = text("""
SELECT max(t.id) FROM turns t JOIN threads th ON th.namespace = t.namespace AND th.thread_id = t.thread_id
WHERE th.id = :id AND t.agent = :agent AND t.deleted_at IS NULL
""")

# The auto-compaction pass's pick: (thread, agent) of recording namespaces whose live transcript has
# more than :past turns and was not asked to compact since its last turn (a transcript left alone,
# say because it is mostly turns that read as high, does not take a place every pass), largest first.
GROWN_TRANSCRIPTS = text(f"""
SELECT th.id, t.agent
FROM threads th
JOIN namespaces n ON n.name = th.namespace AND n.conversation_logging_enabled
JOIN turns t ON t.namespace = th.namespace AND t.thread_id = th.thread_id AND t.deleted_at IS NULL
WHERE th.deleted_at IS NULL AND th.turn_count > :past
GROUP BY th.id, t.agent
HAVING count(*) > :past
   AND NOT EXISTS (SELECT FROM stage_runs r  -- already asked as it stands
                   WHERE {runs_of(COMPACTION, "th.id")}
                     AND r.params->>'agent' = t.agent AND r.created_at >= max(t.ts))
ORDER BY count(*) DESC
LIMIT :limit
""")
