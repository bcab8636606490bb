"""Sending runs to their actors after the write that created them has committed.

A send that fails (Redis down) loses nothing: the run stays ``pending`` in the ledger and the
scheduler's sweep sends it again once the broker answers.
"""

import logging

import redis

from workers import ledger
from workers.embedding import STAGE as EMBEDDING
from workers.embedding import embed_turns

log = logging.getLogger(__name__)

ACTORS = {EMBEDDING: embed_turns}
CHUNK = 64


def send(stage: str, run_ids: list[int]) -> bool:
    """Enqueue the runs (in chunks); False when the broker could not be reached."""
    actor = ACTORS[stage]
    try:
        for start in range(0, len(run_ids), CHUNK):
            actor.send(run_ids[start : start + CHUNK])
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        log.warning("broker unreachable, %d %s runs left for the sweep: %s", len(run_ids), stage, exc)
        return False
    return True


def sweep(grace_seconds: int) -> int:
    """Re-send runs nobody is working on (see ``ledger.stale``). Returns how many were sent."""
    sent = 0
    for stage, run_ids in ledger.stale(grace_seconds).items():
        if stage in ACTORS and send(stage, run_ids):
            sent += len(run_ids)
    return sent
