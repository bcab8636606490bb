"""The thread_index stage: a coding-session thread's new user and assistant messages become turns
of the conversation plane (``pipelines.thread_index``), screened, embedded and recorded only where
the namespace records, like any append, so conversation search finds coding sessions too. A run
covers the messages past ``indexed_count``; the msg ids make a second delivery write nothing
twice, and ``indexed_count`` only moves forward."""

from models import db
from models.stage_run import SKIPPED, SUCCEEDED, StageRun
from models.stages import EMBEDDING, THREAD_INDEX
from pipelines import thread_index
from workers import ledger, outbox
from workers.bodies import close, one_at_a_time
from workers.stages import register


def index(run_ids: list[int]) -> None:
    one_at_a_time(THREAD_INDEX, run_ids, _work)


register(THREAD_INDEX, index)


def _work(run: StageRun) -> None:
    row_id = THREAD_INDEX.subject_id(run.subject)
    with db.session() as s:
        thread = thread_index.unindexed(s, row_id)
    if thread is None:
        return close(run, SKIPPED, reason="deleted")
    written, wake = thread_index.write_turns(thread)
    with db.session() as s:
        thread_index.advance(s, row_id, len(thread.messages))
        thread_index.adopt_title(s, thread.namespace, thread.thread_id, thread.title)
        result = {"messages": len(thread.messages) - thread.start, "turns": written}
        ledger.finish(s, [run], SUCCEEDED, result=result)
    if wake:
        outbox.wake(EMBEDDING, wake)
    return None
