"""Request and answer fields shared by the ops. Values no op may take at all (NUL bytes, lone surrogates,
numbers JSON cannot carry, deep nesting) are refused before validation by ``ops.limits``."""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from models.conversation import Thread, Turn
from models.namespace import NAME_MAX, name_problem
from ops.limits import check_metadata, value_problem
from pipelines import hybrid, looms


def _namespace(name: str) -> str:
    if problem := name_problem(name):
        raise ValueError(problem)
    return name


NamespaceName = Annotated[str, Field(min_length=1, max_length=NAME_MAX), AfterValidator(_namespace)]
Metadata = Annotated[dict[str, Any], AfterValidator(check_metadata)]
# A saved-message op's namespace: a token minted for one end user names its namespace as "@me".
SavedNamespace = Annotated[NamespaceName | Literal["@me"] | None, Field(default=None)]
# The end user whose saved messages an op reads or writes (its own, for a token pinned to one).
UserId = Field(default=None, min_length=1, max_length=256)
# An answer's namespace: where the op acted.
ActedIn = Annotated[
    str, Field(description="The namespace the op acted in (the request's, or the token's only one).")
]


def wait_for_run(run: str) -> Any:
    """A request's ``wait`` for the ``run`` (ingest, compaction, erasure …) it queues; its
    ``wait_seconds`` is ``WaitSeconds``."""
    return Field(
        default=False,
        description=(
            f"true: answer once the {run} run is done (or after wait_seconds); false (default): answer "
            "the queued run at once."
        ),
    )


WaitSeconds = Annotated[
    float,
    Field(gt=0, le=120, description="How long to wait for the run with wait (at most 120 s, default 30)."),
]


def _text(value: str) -> str:
    if problem := value_problem(value):
        raise PydanticCustomError("text", problem)
    return value


# A string sent outside a JSON body (a query or path parameter), held to the rule ``check_body``
# holds a body's strings to: no NUL bytes, no lone surrogates.
Text = Annotated[str, AfterValidator(_text)]

CLOCK_SKEW = timedelta(seconds=5)  # a client's clock may run this far ahead of the server's
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)


def _said(moment: datetime) -> datetime:
    if moment > datetime.now(UTC) + CLOCK_SKEW:
        raise ValueError("is in the future")
    if moment < EARLIEST:
        raise ValueError("is before 1970")
    return moment.astimezone(UTC)


# When something was said: a time with its UTC offset, not in the future (imported history keeps
# the time its transcript gives it).
SaidAt = Annotated[AwareDatetime, AfterValidator(_said)]


class OpRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    namespace: NamespaceName | None = Field(
        default=None,
        description=(
            "The namespace (tenant) to act in; may be omitted when the token covers exactly one namespace. "
            "1-128 characters, no control or format characters, no space at either end."
        ),
    )
    agent: str = Field(
        default=looms.UNNAMED_AGENT,
        min_length=1,
        max_length=128,
        description=(
            "The calling agent's name: which agent's copies of the turns an op writes or reads. Defaults to "
            '"default"; reads take "*" for every agent.'
        ),
    )


# The operator ops' requests (the ledger, the passes, the nights, the cursor keys, the health) name
# no namespace: what they read and act on spans every namespace.
class OperatorRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")


Identifier = Field(min_length=1, max_length=256)

# A paged listing's cursor (``ops.cursors``) in its request, and the one its answer gives on.
PageCursor = Annotated[
    str | None,
    Field(max_length=200, description="The next_cursor of the previous page; omitted for the first page."),
]
NextCursor = Annotated[
    str | None, Field(description="Pass it as cursor for the next page; null on the last page.")
]

ALL_AGENTS = "*"


def named_agent(req: OpRequest) -> str | None:
    """The agent a read is scoped to: one the caller named, or None for every agent's copies (a
    request naming no agent, or ``"*"``, keeps the answers of before copies per agent existed)."""
    return req.agent if "agent" in req.model_fields_set and req.agent != ALL_AGENTS else None


class Ranking(OpRequest):
    """What every search asks: the query, how many hits, and how they are ranked."""

    query: str = Field(
        min_length=1,
        max_length=4000,
        description=(
            "The words to search for (1-4,000 characters): matched by meaning (vector leg) and by words "
            "(BM25 leg)."
        ),
    )
    limit: int = Field(
        default=10, ge=1, le=100, description="How many hits to answer at most (1-100, default 10)."
    )
    # hybrid: both legs fused by reciprocal rank (a hit only the vector leg found must pass its
    # floor); semantic: cosine similarity over the embedded first 2,048 characters, with its
    # floor; lexical: BM25 over the whole text.
    search_mode: Literal["hybrid", "semantic", "lexical"] = Field(
        default="hybrid",
        description=(
            "hybrid (default): both legs fused by reciprocal rank; semantic: vector similarity alone, above "
            "its floor; lexical: BM25 over the whole text alone."
        ),
    )
    lexical_weight: float = Field(
        default=hybrid.LEXICAL_WEIGHT,
        ge=0,
        le=1,
        description=(
            "The weight of the lexical leg in the hybrid fusion, 0-1 (default 0.6); the vector leg weighs 1."
        ),
    )
    now: SaidAt | None = Field(
        default=None,
        description=(
            "The moment the query is asked from, with its UTC offset (default: the request's time): a hybrid "
            'search reads the query\'s time words ("yesterday", "two weeks ago", "in March") against it '
            "and lifts what was said then. Not in the future, not before 1970."
        ),
    )


# A moment in an answer, written as ``datetime.isoformat`` writes it ("+00:00"), as answers always
# have been (pydantic's own JSON would write "Z").
Moment = Annotated[
    datetime,
    PlainSerializer(datetime.isoformat, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date-time"}, mode="serialization"),
]


class Answer(BaseModel):
    """Base of the ops' answer models: a handler returns its op's model, which the OpenAPI document
    publishes, so what an op answers is checked against what it promises on every call."""

    model_config = ConfigDict(extra="forbid")

    def dumped(self) -> dict[str, Any]:
        """The answer as JSON values, holding the keys the handler gave (an optional key it left
        out stays out, as one it set to null stays null)."""
        return self.model_dump(mode="json", exclude_unset=True)


class ConversationThreadAnswer(Answer):
    """A thread as create, update and get show it; only the first four fields while the namespace
    does not record (``stored`` false, reason ``logging_disabled``) and for a deleted thread
    (reason ``deleted``: a deleted thread id is not taken again)."""

    model_config = ConfigDict(title="ThreadAnswer")

    namespace: ActedIn
    thread_id: str = Field(description="The conversation thread's id.")
    stored: bool | None = Field(default=None, description="create and update: whether anything was written.")
    reason: Literal["logging_disabled", "exists", "deleted"] | None = Field(
        default=None,
        description=(
            "Why not: logging_disabled (the namespace does not record), exists (create of a thread that "
            "exists: it is answered as it is) or deleted (a deleted thread's id is never taken again)."
        ),
    )
    agent: str | None = Field(default=None, description="The agent that opened the thread.")
    title: str | None = Field(
        default=None,
        description="The thread's title (set by create or update, or generated by the titles stage).",
    )
    metadata: dict[str, Any] | None = Field(default=None, description="The thread's free-form JSON metadata.")
    run_id: str | None = Field(
        default=None, description="The run id the thread was opened or last updated with."
    )
    turn_count: int | None = Field(
        default=None, description="How many turns the thread has been given (every agent's)."
    )
    created_at: Moment | None = Field(default=None, description="When the thread was created.")
    last_turn_at: Moment | None = Field(
        default=None, description="When its newest turn was said; null for a thread with no turn yet."
    )

    @classmethod
    def of(cls, thread: Thread, **shown: Any) -> Self:
        """The thread as this answer (or one extending it) shows it, with the fields ``shown``
        gives; these may show the title and metadata otherwise (a listing screens them)."""
        shown.setdefault("title", thread.title)
        shown.setdefault("metadata", thread.meta)
        return cls(
            namespace=thread.namespace,
            thread_id=thread.thread_id,
            agent=thread.agent,
            run_id=thread.run_id,
            turn_count=thread.turn_count,
            created_at=thread.created_at,
            last_turn_at=thread.last_turn_at,
            **shown,
        )


class TurnAnswer(Answer):
    msg_id: str = Field(description="The message's id within its thread.")
    role: str = Field(description="Who said it: user, assistant, system or tool.")
    name: str | None = Field(default=None, description="The speaker's name appended with it, if any.")
    content: str = Field(
        description="The turn's text (a compaction summary reads as a system turn in the transcript)."
    )
    reasoning: str | None = Field(description="The assistant's reasoning kept with the turn, if any.")
    agent: str = Field(description="The agent whose copy this is.")
    user_id: str | None = Field(description="The end user the turn was appended for, if any.")
    run_id: str | None = Field(description="The interaction run the turn was appended in, if any.")
    metadata: dict[str, Any] = Field(description="The free-form JSON appended with the turn.")
    tokens: int | None = Field(description="The token count the client sent, if any.")
    sensitivity: Literal["high", "none"] = Field(
        description=(
            "high: the screening found a secret or personal number (the turn is never embedded nor sent to a "
            "model); none otherwise."
        )
    )
    ts: Moment = Field(description="When it was said.")

    @classmethod
    def of(cls, turn: Turn) -> Self:
        return cls(
            msg_id=turn.msg_id,
            role=turn.role,
            name=turn.name,
            content=turn.content,
            reasoning=turn.reasoning,
            agent=turn.agent,
            user_id=turn.user_id,
            run_id=turn.run_id,
            metadata=turn.meta,
            tokens=turn.tokens,
            sensitivity=turn.sensitivity,
            ts=turn.ts,
        )


@dataclass(frozen=True)
class Streamed:
    """An answer sent while it is produced (a large export): its JSON document in pieces, so it
    never sits whole in memory. The HTTP layer streams it; the CLI writes it out as it comes."""

    chunks: Iterator[bytes]
