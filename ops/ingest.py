"""conversation.ingest: a whole transcript handed over in one request. Thin: it checks the size and
the format's first sign, stores the raw text (``pipelines.ingesting``) and one ``ingest`` run in
one transaction and answers the run; the ingest stage parses it and appends its turns through the
write path of conversation.append."""

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from models import db
from models.settings import get_settings
from models.stage_run import FAILED
from models.stages import INGEST
from ops.caller import Caller
from ops.errors import invalid
from ops.schemas import ActedIn, Answer, Identifier, OpRequest, WaitSeconds, wait_for_run
from ops.schemas.runs import RunAnswer, run_public
from ops.waiting import Waiting, started
from pipelines import ingesting, recording, transcripts
from workers import ledger


def body_cap() -> int:
    return get_settings().ingest_max_bytes


class IngestRequest(OpRequest):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "thread_id": "imported-1",
                    "transcript": "# user\nHow do we deploy to staging?\n\n# assistant\nRun make deploy.\n",
                    "source": "deploy-notes.md",
                    "wait": True,
                }
            ]
        }
    )

    thread_id: Annotated[
        str, Field(description="The conversation thread the transcript's turns go to (1-256 characters).")
    ] = Identifier
    transcript: str = Field(
        min_length=1,
        description="Markdown (# user / # assistant sections), a JSON array, "
        "or a Claude Code session file (JSON lines)",
    )
    source: str | None = Field(default=None, max_length=256, description="the file's name, for messages")
    first_line: int = Field(
        default=1, ge=1, le=1_000_000_000, description="a piece of a JSON-lines session file: its first line"
    )
    wait: bool = wait_for_run("ingest")
    wait_seconds: WaitSeconds = 30


class IngestAnswer(Answer):
    namespace: ActedIn
    thread_id: str = Field(description="The thread the transcript goes to.")
    agent: str = Field(description="The agent the turns are stored for.")
    stored: bool = Field(description="Whether the raw transcript was kept and an ingest run requested.")
    # duplicate: this very transcript was handed over before (its run answers what it did)
    reason: Literal["logging_disabled", "duplicate"] | None = Field(
        default=None,
        description=(
            "logging_disabled: the namespace does not record; duplicate: this very transcript was handed "
            "over before (its run says what it did)."
        ),
    )
    transcript_id: int | None = Field(default=None, description="The stored transcript's id.")
    run: RunAnswer | None = Field(
        default=None, description="The ingest run; its result counts the turns stored, duplicate and refused."
    )


def ingest(caller: Caller, req: IngestRequest) -> IngestAnswer | Waiting[IngestAnswer]:
    """Import a whole transcript (markdown, a JSON array, or a Claude Code session file).

    Stores the raw text and requests one ingest run, which parses it and appends its turns as
    conversation.append would (deduplicated, screened, embedded). Answers the run at once (or once it
    is done, with `wait`); the same text again answers `reason: "duplicate"` with its run. A large
    JSON-lines file may be sent in pieces, each with its `first_line`. The run's result counts the
    turns stored, duplicate and refused; a transcript that does not parse fails its run
    (`reason: "malformed"`).

    Errors: 413 for a body over LOOM_INGEST_MAX_BYTES; 422 for `first_line` with a format other than
    JSON lines."""
    namespace = caller.namespace(req.namespace)
    if not transcripts.looks_like_a_transcript(req.transcript):
        raise invalid(
            "not a Markdown ('# user' sections), JSON ('[…]') or Claude Code (JSON lines) transcript",
            "transcript",
        )
    if req.first_line != 1 and not transcripts.in_pieces(req.transcript):
        raise invalid("only a JSON-lines session file is sent in pieces", "first_line")
    with db.session() as s:
        if not recording.recording(s, namespace):
            return IngestAnswer(
                namespace=namespace,
                thread_id=req.thread_id,
                agent=req.agent,
                stored=False,
                reason="logging_disabled",
            )
        kept = ingesting.keep(
            s, namespace, req.thread_id, req.agent, req.source, req.transcript, req.first_line
        )
        before = ingesting.run_status(s, INGEST.key(kept.transcript_id, kept.version))
        run = ledger.request(s, INGEST, kept.transcript_id, kept.version, {}, revive=True)
    stored = before in (None, FAILED)  # new, or one that failed and is tried again
    return started(
        INGEST,
        run,
        req.wait,
        req.wait_seconds,
        lambda run: IngestAnswer(
            namespace=namespace,
            thread_id=req.thread_id,
            agent=req.agent,
            stored=stored,
            reason=None if stored else "duplicate",
            transcript_id=kept.transcript_id,
            run=run_public(run),
        ),
    )
