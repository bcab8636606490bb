"""Request and answer fields shared by the ops. Values no op may take at all (NUL bytes, lone surrogates,
numbers JSON cannot carry, deep nesting) are refused before validation by ``ops.limits``."""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

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

from models.namespace import NAME_MAX, name_problem
from ops.limits import check_metadata, value_problem


def _namespace(name: str) -> str:
    if problem := name_problem(name):
        raise ValueError(problem)
    return name


NamespaceName = Annotated[str, Field(min_length=1, max_length=NAME_MAX), AfterValidator(_namespace)]
Metadata = Annotated[dict[str, Any], AfterValidator(check_metadata)]
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
        default="default",
        min_length=1,
        max_length=128,
        description=(
            "The calling agent's name: which agent's copies of the turns an op writes or reads. Defaults to "
            '"default"; reads take "*" for every agent.'
        ),
    )


Identifier = Field(min_length=1, max_length=256)


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


@dataclass(frozen=True)
class Streamed:
    """An answer sent while it is produced (a large export): its JSON document in pieces, so it
    never sits whole in memory. The HTTP layer streams it; the CLI writes it out as it comes."""

    chunks: Iterator[bytes]
