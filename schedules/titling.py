"""The titling stage's pass (``titler`` by name): a title run for each thread that wants one, as
it stands (its newest turn and its metadata: new turns or new metadata make a new request). It only
enqueues: untitled live threads of recording namespaces, active within the window, with enough
live turns, not marked ``title_refused``, at most a cap a pass."""

import logging
from datetime import timedelta

from models import db
from models.base import stored, utcnow
from models.settings import get_settings
from models.stage_run import PENDING
from models.stages import TITLING
from pipelines import titling
from providers import llm
from workers import ledger, outbox

log = logging.getLogger(__name__)


def title_untitled() -> list[int]:
    """Returns the runs sent."""
    settings = get_settings()
    if not settings.conversation_titler_enabled:
        return []
    if not llm.configured():
        llm.note_unconfigured(log, "the titler")
        return []
    since = utcnow() - timedelta(hours=settings.conversation_titler_window_hours)
    with db.session() as s:
        wanted = titling.candidates(
            s,
            since,
            settings.conversation_titler_min_turns,
            settings.conversation_titler_max_threads_per_pass,
        )
        runs = [ledger.request(s, TITLING, c.thread_row_id, c.version, {}) for c in wanted]
    pending = [stored(run.id) for run in runs if run.status == PENDING]
    if pending:
        outbox.send(TITLING, pending)
    return pending
