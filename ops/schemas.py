"""Request models shared by every op: strict fields, and no NUL byte anywhere (PostgreSQL's text
and jsonb refuse it, and a 500 from the database is not a reason a caller can act on)."""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False


class OpRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    namespace: str | None = Field(default=None, min_length=1, max_length=128)
    agent: str = Field(default="default", min_length=1, max_length=128)

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        if _has_nul(value):
            raise ValueError("must not contain NUL bytes")
        return value


Identifier = Field(min_length=1, max_length=256)
