"""The OpenAPI document: one path per op of the registry, with its real request and answer schemas.

The ops are served by one generic route (``POST /v1/{op_name}``, hidden from the document) that
reads and checks the body itself (``ops.limits``), so FastAPI cannot derive the ops' schemas from
it: they are written here from the registry's request and answer models, so clients can be
generated and a schema-driven fuzzer can exercise every op; each op's summary and description are
its handler's docstring (``Op.documentation``), each field's its model's ``Field(description=…)``.
The GET routes (``/looms/by-id/{id}/sessions``, ``/api/threads…``) declare typed parameters, which
FastAPI describes; ``WITH_TOKEN`` gives them the ops' refusals, and ``reads`` publishes the body of
a route that reads its own (the coding-session threads' upserts).
"""

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema
from swagger_ui_bundle import swagger_ui_path

from ops.limits import MAX_BODY_BYTES
from ops.registry import OPS

REF = "#/components/schemas/{model}"

ERROR: dict[str, Any] = {
    "type": "object",
    "description": "Every refusal's body: why, and which field when one is at fault.",
    "properties": {
        "error": {"type": "string", "description": "Why the request was refused, in a sentence."},
        "field": {
            "type": "string",
            "description": "The field (or parameter) at fault, dotted when nested (e.g. messages.0.content).",
        },
    },
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
    "415": "the body is not declared as JSON (`Content-Type: application/json`, or none)",
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

# The models of the bodies routes read themselves (``reads``), published beside the ops' models.
_BODIES: list[type[BaseModel]] = []


def reads(model: type[BaseModel], refusals: dict[str, str], stale: str) -> dict[str, Any]:
    """A route's arguments for a body it reads itself (bounded, as an op reads its own) that is
    ``model``, answered as stored: FastAPI sees no body parameter, so the document is told it, with
    the route's ``refusals`` beside the token's and its 409 (``stale``), which carries the latest
    ``model``. The model's schema lands in the document's components."""
    if model not in _BODIES:
        _BODIES.append(model)
    ref = {"$ref": REF.format(model=model.__name__)}
    conflict = {
        "type": "object",
        "properties": {
            **ERROR["properties"],
            "thread": {**ref, "description": "The latest stored version, to merge with and send again."},
        },
        "required": ["error", "thread"],
    }
    error = _json({"$ref": REF.format(model="Error")})
    return {
        "openapi_extra": {**WITH_TOKEN["openapi_extra"], "requestBody": {"required": True, **_json(ref)}},
        "responses": {
            "200": {"description": "the body as stored, with its new version", **_json(ref)},
            **WITH_TOKEN["responses"],
            **{status: {"description": text, **error} for status, text in refusals.items()},
            "409": {"description": stale, **_json(conflict)},
        },
    }


INFO = """Loom keeps AI agents' conversations and memory: the ops below are `POST /v1/<op>` with a JSON
body and `Authorization: Bearer <token>` (`loom tokens create`); every op takes `namespace` (optional
when the token covers exactly one) and `agent`. A refusal is `{"error": …, "field": …}` with a 4xx;
while the database is down every op answers 503 with `Retry-After`.

**MCP.** `/mcp` serves the same memory to MCP clients (Claude Code, Codex, Cursor…) as JSON-RPC over
streamable HTTP, with the same bearer token: it is not described here. Its tools and how to connect
are in `docs/mcp.md` of Loom's repository."""


def document(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema:
        return app.openapi_schema
    spec = get_openapi(title=app.title, version=app.version, description=INFO, routes=app.routes)
    models: list[tuple[type[BaseModel], JsonSchemaMode]] = [
        (op.request, "validation") for op in OPS.values()
    ] + [(op.answer, "serialization") for op in OPS.values()]
    refs, defs = models_json_schema(models + [(model, "validation") for model in _BODIES], ref_template=REF)
    components = spec.setdefault("components", {})
    components.setdefault("schemas", {}).update(defs["$defs"] | {"Error": ERROR})
    components["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    error = _json({"$ref": REF.format(model="Error")})
    for name, op in OPS.items():
        summary, description = op.documentation
        needs = f"the `{op.role}` role" + (" and a token of every namespace" if op.all_namespaces else "")
        spec["paths"][f"/v1/{name}"] = {
            "post": {
                "operationId": name.replace(".", "_"),
                "summary": summary,
                "description": f"{description}\n\nNeeds {needs}.",
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


ASSETS = "/docs/assets"  # Swagger UI's files, served by Loom itself


def serve_docs(app: FastAPI) -> None:
    """``GET /docs``: Swagger UI over the document, its script, style and icon served from the
    swagger-ui-bundle package, so the page works on a machine with no network (FastAPI's own page
    loads them from a CDN). No token: the document is public, as ``/openapi.json`` is."""
    app.mount(ASSETS, StaticFiles(directory=swagger_ui_path), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
            swagger_ui_parameters={"validatorUrl": None},  # no badge fetched from swagger.io
        )
