"""Every stage's declaration, once, below every layer that spells a run: the named SQL that writes
an embedding run with its turn, the pipelines, the ledger, the passes and the ops all take a
stage from here. A stage's modules are named for its declaration (``TITLING``: titling): its work
in ``pipelines/``, its actor's body in ``workers/stages/``, its pass, if it has one, in
``schedules/``.

The names a declaration holds are stored, so they stay across releases whatever the modules are
called: ``name`` in ``stage_runs.stage`` and as the Redis queue, ``actor`` in every Dramatiq
message waiting in Redis."""

from dataclasses import dataclass

from sqlalchemy import ColumnElement, func

from models.stage_run import FAILED, SKIPPED


@dataclass(frozen=True)
class Stage:
    """A stage's declaration. A run works on one subject, ``<subject_kind>:<id>`` (an embedding
    row, a thread), and is unique by its key, ``loom_run_key(name, id, version)``: the version says
    what the run was asked to do (the text's digest, the window's last turn), so the same request
    is never queued twice and a new one gets a run of its own."""

    name: str  # the ledger's ``stage`` column and the stage's queue, e.g. "embedding"
    actor: str  # the Dramatiq actor's name, which the messages in Redis carry
    subject_kind: str  # what a run's subject is, e.g. "embedding" or "thread"
    # Run ids a message carries: a batching stage takes many (one model call serves them), a stage
    # whose runs each wait on a model takes one, so worker threads wait on several calls at once.
    chunk: int = 64
    # Statuses an operator may send back to pending with `loom runs retry` (succeeded never is).
    retryable: tuple[str, ...] = (FAILED, SKIPPED)

    @property
    def queue(self) -> str:
        return self.name

    @property
    def subject_prefix(self) -> str:
        """What every subject of the stage starts with: a statement that draws the subject's id
        itself (``models.queries.turns.APPEND_TURN``) appends the id to it."""
        return f"{self.subject_kind}:"

    def subject(self, subject_id: int) -> str:
        return f"{self.subject_prefix}{subject_id}"

    def subject_id(self, subject: str) -> int:
        number = subject.removeprefix(self.subject_prefix)
        if number == subject or not number.isdigit():
            raise ValueError(f"{subject!r} is not a subject of the {self.name} stage")
        return int(number)

    def key(self, subject_id: int, version: str) -> ColumnElement[str]:
        """The run's key, as SQL computes it (``loom_run_key``, the one definition): for the
        statement that writes or looks up the run."""
        return func.loom_run_key(self.name, subject_id, version)


# Batches of turns' embedding rows, one model call a batch.
EMBEDDING = Stage("embedding", "embed_turns", "embedding")
# Batches of memory threads; a run's version is its text's digest, so a reframed thread gets its own.
MEMORY_EMBEDDING = Stage("memory_embedding", "embed_memory_threads", "memory_thread")
# A transcript handed over whole, appended through the write path of conversation.append.
INGEST = Stage("ingest", "ingest_transcripts", "transcript", chunk=1)
# A thread's title, written by the model from its first turns.
TITLING = Stage("title", "title_threads", "thread", chunk=1)
# One agent's transcript of a thread, summarised by the model.
COMPACTION = Stage("compaction", "compact_threads", "thread", chunk=1)
# A batch of messages or a session's observations made into memories.
EXTRACTION = Stage("extraction", "extract", "evidence", chunk=1)
# A LoomSession consolidated at night.
NIGHT_WEAVING = Stage("night_weaving", "weave", "loom_session", chunk=1)
# One window of a brief save's events condensed into the brief.
BRIEF_WINDOW = Stage("brief_window", "revise", "brief_window", chunk=1)
# A range of turn ids judged again by this build's screening rules.
SCREENING = Stage("screening", "rescreen_turns", "turns", chunk=1)
# A month partition of turns dropped, trimmed or moved to warm storage.
RETENTION = Stage("retention", "keep_partitions", "month", chunk=1)
# A month's lexical contexts, for the turns written before contexts existed.
CONTEXTS = Stage("contexts", "build_contexts", "month", chunk=1)
# One erasure request carried out.
ERASURE = Stage("erasure", "erase", "erasure", chunk=1)
# A coding-session thread's new messages made turns of the conversation plane.
THREAD_INDEX = Stage("thread_index", "index", "coding_thread", chunk=1)
# A reflection's answer written by the model from the threads it drew on (memory.reflect); its
# subject the first thread cited.
REFLECTION = Stage("reflection", "reflect", "memory_thread", chunk=1)
