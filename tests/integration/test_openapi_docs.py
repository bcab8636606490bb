"""The OpenAPI document is one a client can be built from: every op has a summary and a
description, every field and parameter a description that says more than its name, the
coding-session thread routes are in it, and /docs loads Swagger UI from Loom itself."""

import re

import pytest

from ops.registry import OPS


@pytest.fixture(scope="module")
def document(client):
    return client.get("/openapi.json").json()


def _words(text: str) -> str:
    """A name or a description as words: "thread_id", "threadId" and "Thread id." all read "thread id"."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return " ".join(re.findall(r"[a-z0-9]+", spaced.lower()))


def _says_more(description: str | None, name: str) -> bool:
    return bool(description) and _words(description) != _words(name)


def test_says_more_refuses_a_description_that_is_only_the_name():
    assert not _says_more("Thread id", "thread_id")
    assert not _says_more("loom ID.", "loomId")
    assert not _says_more(None, "limit")
    assert _says_more("How many threads a page holds (1-200).", "limit")


def _properties(schema: dict, where: str):
    """Every property of a schema, nested ones included, as (where, name, its schema)."""
    for name, prop in schema.get("properties", {}).items():
        yield f"{where}.{name}", name, prop
        yield from _properties(prop, f"{where}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            yield from _properties(schema[key], f"{where}[]")
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key, []):
            yield from _properties(branch, where)


def test_every_op_has_a_summary_and_a_description(document):
    for name in OPS:
        post = document["paths"][f"/v1/{name}"]["post"]
        assert _says_more(post.get("summary"), name), name
        # more than the role it needs: what it does, then the role
        assert len(post.get("description", "").split("\n\n")) >= 2, name


@pytest.mark.parametrize(
    "name",
    [
        "conversation.append",
        "conversation.search",
        "conversation.ingest",
        "memory.set",
        "memory.search",
        "context.pack",
    ],
)
def test_the_main_ops_show_a_request_a_client_can_copy(document, name):
    ref = document["paths"][f"/v1/{name}"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    examples = document["components"]["schemas"][ref["$ref"].rsplit("/", 1)[-1]]["examples"]
    assert examples
    for example in examples:
        OPS[name].request.model_validate(example)  # each a valid body


def test_every_field_of_every_schema_has_a_description(document):
    bare = [
        where
        for model, schema in document["components"]["schemas"].items()
        for where, name, prop in _properties(schema, model)
        if not _says_more(prop.get("description"), name)
    ]
    assert not bare, bare


def test_every_route_and_parameter_is_described(document):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert operation.get("summary") and operation.get("description"), (method, path)
            for parameter in operation.get("parameters", []):
                assert _says_more(parameter.get("description"), parameter["name"]), (path, parameter["name"])


def test_the_coding_session_thread_routes_are_in_the_document(document):
    paths = document["paths"]
    assert {"get", "post"} <= set(paths["/api/threads"])
    assert {"get", "put"} <= set(paths["/api/threads/{thread_id}"])
    assert "get" in paths["/api/threads/search"] and "get" in paths["/api/threads/schema"]
    body = paths["/api/threads"]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert body.rsplit("/", 1)[-1] in document["components"]["schemas"]
    assert {"409", "413", "422"} <= set(paths["/api/threads/{thread_id}"]["put"]["responses"])


def test_the_document_points_to_the_mcp_page(document):
    assert "docs/mcp.md" in document["info"]["description"]


def test_docs_load_swagger_ui_from_loom_itself(client):
    page = client.get("/docs")
    assert page.status_code == 200
    assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert assets and all(url.startswith("/") for url in assets), assets  # no other host
    for url in assets:
        assert client.get(url).status_code == 200, url
    script = client.get(next(url for url in assets if url.endswith("swagger-ui-bundle.js")))
    assert "javascript" in script.headers["content-type"] and b"SwaggerUIBundle" in script.content
