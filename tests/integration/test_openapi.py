"""The published OpenAPI document drives a property-based run over every op: whatever a client
sends within (or outside) the schemas, no answer is a 5xx and every answer matches its schema."""

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from ops.registry import OPS
from tests.support.calls import append, enable_logging

NS = "fuzz"


@pytest.fixture(scope="module")
def api_schema(database):
    from api.app import create_app

    enable_logging(NS)
    append(NS, "t", "a turn for the reads to find", msg_id="m1")
    return schemathesis.openapi.from_asgi("/openapi.json", create_app(warm_embedder=False))


@pytest.fixture(scope="module")
def fuzz_token(make_token):
    return make_token(NS, role="admin")


def test_the_document_describes_every_op_with_its_request_and_answer(client):
    paths = client.get("/openapi.json").json()["paths"]
    for name in OPS:
        post = paths[f"/v1/{name}"]["post"]
        assert post["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("Request")
        assert post["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        assert {"401", "403", "413", "422", "503"} <= set(post["responses"])


def test_the_documents_schemas_are_named_by_their_classes_alone_whatever_module_holds_them(client):
    """Two models of one class name make FastAPI name both by module path
    (``ops__memory__SearchRequest``), so moving an op's module would rename its published schema:
    every model's class name is unique, and no schema name carries a module."""
    names = client.get("/openapi.json").json()["components"]["schemas"]
    assert [name for name in names if "__" in name] == []
    assert {"ConversationSearchRequest", "MemorySearchRequest", "BriefSaveRequest"} <= set(names)


# The GET routes, each with its typed parameters (where they come from, and their names).
GETS = {
    "/looms/by-id/{loom_id}/sessions": {
        ("path", "loom_id"),
        *(("query", q) for q in ("namespace", "agent", "agent_name", "awaiting_night", "limit", "cursor")),
    },
    "/api/threads": {("query", "limit"), ("query", "offset"), ("query", "namespace")},
    "/api/threads/search": {("query", "q"), ("query", "limit"), ("query", "namespace")},
    "/api/threads/{thread_id}": {("path", "thread_id")},
    "/api/threads/schema": set(),
}


def test_the_document_describes_every_get_route_with_its_parameters_and_errors(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert {path for path, item in paths.items() if "get" in item} == {*GETS, "/healthz", "/metrics"}
    for path, expected in GETS.items():
        get = paths[path]["get"]
        assert {(p["in"], p["name"]) for p in get.get("parameters", [])} == expected, path
        if expected:
            assert get["responses"]["422"]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/Error"
            }, path
    limit = {p["name"]: p for p in paths["/api/threads"]["get"]["parameters"]}["limit"]["schema"]
    assert (limit["minimum"], limit["maximum"]) == (1, 200)


LONGEST_WAIT = 120  # seconds: the bound of every op's wait_seconds
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=str)
@pytest.mark.parametrize("op", sorted(OPS))
def test_no_op_answers_a_5xx_and_every_answer_matches_the_document(api_schema, fuzz_token, worker, op, mode):
    """Positive cases follow the request schema (most reach the op); negative ones break it on
    purpose (wrong types, missing fields, no token...). A worker runs the stages, so an op that
    waits on its runs answers once they are done, and always within its longest wait (120 s)."""
    operation = api_schema[f"/v1/{op}"]["POST"]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def exchange(case) -> None:
        response = case.call(headers=fuzz_token, timeout=LONGEST_WAIT + 10)
        case.validate_response(response, checks=CHECKS)

    exchange()


@pytest.mark.parametrize(
    ("path", "mode"),
    [
        (path, mode)
        for path, parameters in GETS.items()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
        if parameters or mode == GenerationMode.POSITIVE  # nothing to break in a route without any
    ],
    ids=str,
)
def test_no_get_route_answers_a_5xx_and_every_answer_matches_the_document(api_schema, fuzz_token, path, mode):
    """The same run over the GET routes' typed path and query parameters."""
    operation = api_schema[path]["GET"]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def exchange(case) -> None:
        response = case.call(headers=fuzz_token)
        case.validate_response(response, checks=CHECKS)

    exchange()
