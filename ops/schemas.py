"""Request fields shared by every op. Values no op may take at all (NUL bytes, lone surrogates,
numbers JSON cannot carry, deep nesting) are refused before validation by ``ops.limits``."""

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from models.namespace import NAME_MAX, name_problem
from ops.limits import check_metadata


def _namespace(name: str) -> str:
    if problem := name_problem(name):
        raise ValueError(problem)
    return name


NamespaceName = Annotated[str, Field(min_length=1, max_length=NAME_MAX), AfterValidator(_namespace)]
Metadata = Annotated[dict[str, Any], AfterValidator(check_metadata)]


class OpRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    namespace: NamespaceName | None = None
    agent: str = Field(default="default", min_length=1, max_length=128)


Identifier = Field(min_length=1, max_length=256)


class Answer(BaseModel):
    """Base of the ops' answer models. They describe what the handlers return (the handlers build
    plain dicts, for speed): the OpenAPI document publishes them, and the schema-driven test checks
    every answer against them."""

    model_config = ConfigDict(extra="forbid")
