"""The auto-compaction pass: a compaction run for each transcript grown past
``LOOM_COMPACTION_AUTO_TURNS`` (0 = off), with the default window."""

import logging

from models import db
from models.base import stored
from models.settings import get_settings
from models.stage_run import PENDING
from models.stages import COMPACTION
from pipelines import compaction
from providers import llm
from workers import outbox
from workers.stages.compaction import request

log = logging.getLogger(__name__)


def compact_grown() -> list[int]:
    """Returns the runs sent."""
    settings = get_settings()
    if not settings.compaction_auto_turns:
        return []
    if not llm.configured():
        llm.note_unconfigured(log, "auto-compaction")
        return []
    with db.session() as s:
        grown = compaction.grown(s, settings.compaction_auto_turns, settings.compaction_auto_max_threads)
        runs = [
            request(s, row, agent, settings.compaction_keep_recent, settings.compaction_min_to_compact)
            for row, agent in grown
        ]
    pending = [stored(run.id) for run in runs if run.status == PENDING]
    if pending:
        outbox.send(COMPACTION, pending)
    return pending
