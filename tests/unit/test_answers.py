"""An op's answer is its typed model, dumped once by the registry: moments as ``isoformat`` writes
them, the keys the handler gave, and nothing else let through."""

import dataclasses
from datetime import UTC, datetime

import pytest

from ops import registry
from ops.caller import OPERATOR
from ops.schemas import Answer, Moment


class Shown(Answer):
    at: Moment
    until: Moment | None = None
    note: str | None = None


def test_a_moment_is_written_with_its_utc_offset_and_unset_keys_stay_out():
    at = datetime(2026, 12, 1, 18, 0, 0, 123456, tzinfo=UTC)
    assert Shown(at=at, note=None).dumped() == {"at": "2026-12-01T18:00:00.123456+00:00", "note": None}
    assert Shown.model_json_schema(mode="serialization")["properties"]["at"] == {
        "format": "date-time",
        "title": "At",
        "type": "string",
    }


def test_a_handler_that_answers_anything_but_its_model_is_refused(monkeypatch):
    op = registry.OPS["health.get"]
    monkeypatch.setitem(registry.OPS, "health.get", dataclasses.replace(op, handler=lambda caller, req: {}))
    with pytest.raises(TypeError, match="health.get answered dict, not its HealthAnswer"):
        registry.call("health.get", OPERATOR, {})
