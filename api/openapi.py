"""The OpenAPI document: one path per op of the registry, with its real request and answer schemas.

The ops are served by one generic route (``POST /v1/{op_name}``, hidden from the document) that
reads and checks the body itself (``ops.limits``), so FastAPI cannot derive the ops' schemas from
it: they are written here from the registry's request and answer models, so clients can be
generated and a schema-driven fuzzer can exercise every op. The GET routes
(``/looms/by-id/{id}/sessions``, ``/api/threads…``) declare typed parameters, which FastAPI
describes; ``WITH_TOKEN`` gives them the ops' refusals.
"""

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic.json_schema import models_json_schema

from ops.limits import MAX_BODY_BYTES
from ops.registry import OPS

REF = "#/components/schemas/{model}"

ERROR = {
    "type": "object",
    "properties": {"error": {"type": "string"}, "field": {"type": "string"}},
    "required": ["error"],
    "additionalProperties": False,
}

TOO_LARGE = (
    f"the body is over the op's cap ({MAX_BODY_BYTES} bytes; conversation.ingest: LOOM_INGEST_MAX_BYTES)"
)
_ERRORS = {
    "400": "the body is not valid JSON",
    "401": "no bearer token, or an unknown one",
    "403": "the op needs a higher role, or the token does not cover the namespace",
    "404": "no such op, or no such thread (or brief)",
    "409": (
        "the op needs what this server is not set up with (conversation.compact: an LLM provider), or a "
        "compare-and-set failed (session.brief_save with if_revision)"
    ),
    "413": TOO_LARGE,
    "422": "a field is missing or invalid; `field` names it",
    "503": (
        "the database is unavailable; retry after `Retry-After` seconds (session.brief_save: every "
        "model call of its windows failed; send it again)"
    ),
    "500": "an unexpected error (its details are in the server's log only)",
}


def _json(schema: dict) -> dict:
    return {"content": {"application/json": {"schema": schema}}}


# A GET route that reads a token declares it with ``**openapi.WITH_TOKEN``: its typed parameters
# are published with its refusals, in the ops' error shape (FastAPI's own 422 is not what it
# answers: ``api.app`` renders a parameter's validation failure as an op's).
_REFUSALS = {
    "401": _ERRORS["401"],
    "403": "the token does not cover the namespace, or its role or bounds refuse the op",
    "404": "no such thread, or no such loom",
    "422": "a parameter is missing or invalid; `field` names it",
    "503": "the database is unavailable; retry after `Retry-After` seconds",
    "500": _ERRORS["500"],
}
WITH_TOKEN: dict[str, Any] = {
    "openapi_extra": {"security": [{"bearer": []}]},
    "responses": {
        status: {"description": text, **_json({"$ref": REF.format(model="Error")})}
        for status, text in _REFUSALS.items()
    },
}


def document(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema:
        return app.openapi_schema
    spec = get_openapi(title=app.title, version=app.version, routes=app.routes)
    models = [(op.request, "validation") for op in OPS.values()] + [
        (op.answer, "serialization") for op in OPS.values()
    ]
    refs, defs = models_json_schema(models, ref_template=REF)
    components = spec.setdefault("components", {})
    components.setdefault("schemas", {}).update(defs["$defs"] | {"Error": ERROR})
    components["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    error = _json({"$ref": REF.format(model="Error")})
    for name, op in OPS.items():
        spec["paths"][f"/v1/{name}"] = {
            "post": {
                "operationId": name.replace(".", "_"),
                "summary": name,
                "description": f"Needs the `{op.role}` role.",
                "security": [{"bearer": []}],
                "requestBody": {"required": True, **_json(refs[(op.request, "validation")])},
                "responses": {
                    "200": {"description": "the op's answer", **_json(refs[(op.answer, "serialization")])},
                    **{status: {"description": text, **error} for status, text in _ERRORS.items()},
                },
            }
        }
    # looms.sessions by its GET route answers what the op answers.
    sessions = spec["paths"]["/looms/by-id/{loom_id}/sessions"]["get"]["responses"]
    sessions["200"] = {
        "description": "the op's answer",
        **_json(refs[(OPS["looms.sessions"].answer, "serialization")]),
    }
    app.openapi_schema = spec
    return spec
