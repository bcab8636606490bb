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
from tests.integration.conftest import append, enable_logging

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


CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=str)
@pytest.mark.parametrize("op", sorted(OPS))
def test_no_op_answers_a_5xx_and_every_answer_matches_the_document(api_schema, fuzz_token, op, mode):
    """Positive cases follow the request schema (most reach the op); negative ones break it on
    purpose (wrong types, missing fields, no token...)."""
    operation = api_schema[f"/v1/{op}"]["POST"]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def exchange(case) -> None:
        response = case.call(headers=fuzz_token)
        case.validate_response(response, checks=CHECKS)

    exchange()
