"""Named SQL of the periodic passes' record (``pass_runs``) and their lock (psycopg placeholders:
run on a driver connection in autocommit, which holds the session-level lock)."""

# One firing of a pass at a time, across processes: a session advisory lock in the passes' class
# (the first key; PostgreSQL's two-key space, so the single-key locks of models.partitions and the
# retention stage never meet it) and the pass's name hashed (the second). Taken without waiting: a
# firing that finds it held is refused, not queued. It goes with the connection if the process dies.
TRY_LOCK = "SELECT pg_try_advisory_lock(%s, hashtext(%s))"
UNLOCK = "SELECT pg_advisory_unlock(%s, hashtext(%s))"
