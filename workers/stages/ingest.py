"""The ingest stage: one run parses one transcript handed over whole (conversation.ingest) and
appends its turns through the write path of conversation.append (screening, the recording switch,
idempotent msg_ids), then wakes the embedding stage once for all of them.

Safe to run twice and to kill anywhere: every turn's msg_id is derived from the thread, its place
and its text, so a run done again (or a longer version of the same session file) adds only the
turns not yet there. A transcript that does not parse fails its run at once, naming the line, with
no turn written; `loom runs retry` re-runs it from the stored text (after a parser fix)."""

import time
from collections import Counter

from models import db
from models.settings import get_settings
from models.stage_run import FAILED, SKIPPED, SUCCEEDED, StageRun
from models.stages import EMBEDDING, INGEST
from models.transcript import Transcript
from pipelines import appending, transcripts
from workers import ledger, outbox
from workers.bodies import close, one_at_a_time
from workers.stages import register

PROGRESS_SECONDS = 0.5  # between two writes of how far a run got: a --wait shows it in turns


def ingest_transcripts(run_ids: list[int]) -> None:
    one_at_a_time(INGEST, run_ids, _work)


register(INGEST, ingest_transcripts)


def _work(run: StageRun) -> None:
    with db.session() as s:
        transcript = s.get(Transcript, INGEST.subject_id(run.subject))
    if transcript is None:
        return close(run, SKIPPED, reason="deleted")
    try:
        source = transcript.source or "transcript"
        turns = transcripts.parse_transcript(transcript.raw, source, transcript.first_line)
    except transcripts.TranscriptError as exc:
        return close(run, FAILED, reason="malformed", error=str(exc))
    cap = get_settings().ingest_max_turns
    if len(turns) > cap:
        return close(run, FAILED, reason="too-many-turns", error=f"{len(turns)} turns, over the cap of {cap}")
    counts: Counter[str] = Counter()
    shown = time.monotonic()
    with ledger.leased([run]), db.autocommit() as conn:
        for index, turn in enumerate(turns):
            if time.monotonic() - shown >= PROGRESS_SECONDS:
                ledger.show_progress(run, {"turns": len(turns), "done": index, **counts})
                shown = time.monotonic()
            written = appending.write(
                conn,
                appending.NewTurn(
                    namespace=transcript.namespace,
                    thread_id=transcript.thread_id,
                    agent=transcript.agent,
                    role=turn.role,
                    content=turn.content,
                    reasoning=turn.reasoning,
                    msg_id=transcripts.turn_msg_id(transcript.thread_id, index, turn),
                    ts=turn.ts,
                ),
            )
            counts[written.outcome] += 1
            if written.outcome in (appending.LOGGING_DISABLED, appending.DELETED):
                break  # recording switched off, or the thread deleted, while this ran: stop here
    if counts[appending.STORED]:
        # One wake-up: its claim fills a batch from the pending runs, and a full batch wakes the next.
        outbox.wake(EMBEDDING, [])
    result = {"turns": len(turns), "done": counts.total(), **counts}
    stopped = next((o for o in (appending.LOGGING_DISABLED, appending.DELETED) if counts[o]), None)
    return close(run, SKIPPED if stopped else SUCCEEDED, reason=stopped, result=result)
