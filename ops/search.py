"""conversation.search: vector-first, substring when the embedder cannot answer."""

import logging
from datetime import datetime
from typing import Literal

from pydantic import Field

from models import db
from models.settings import get_settings
from ops.caller import Caller
from ops.conversation_read import named_agent
from ops.schemas import Answer, OpRequest
from pipelines import search
from providers.embedders import get_embedder

log = logging.getLogger(__name__)


class SearchRequest(OpRequest):
    query: str = Field(min_length=1, max_length=4000)
    limit: int = Field(default=10, ge=1, le=100)
    thread_id: str | None = Field(default=None, max_length=256)
    run_id: str | None = Field(default=None, max_length=256)
    role: Literal["user", "assistant", "system", "tool"] | None = None
    namespace_scope: Literal["all_mine", "namespace"] = "all_mine"


class Hit(Answer):
    namespace: str
    thread_id: str
    msg_id: str
    role: str
    agent: str
    ts: datetime
    similarity: float | None  # null in the substring fallback
    excerpt: str


class SearchAnswer(Answer):
    mode: Literal["vector", "substring"]
    embedder_error: str | None = None  # why the fallback answered
    namespaces: list[str]
    hits: list[Hit]


def _query_vector(query: str) -> tuple[list[float] | None, str | None, str | None]:
    """(the query's vector, the model that made it, why there is none)."""
    try:
        embedder = get_embedder()
        return embedder.embed([query])[0], embedder.name, None
    except Exception as exc:  # any embedder failure degrades to the fallback, never a 500
        log.warning("embedder unavailable for search, using substring fallback: %s", exc)
        return None, None, f"{type(exc).__name__}: {exc}"


def run(caller: Caller, req: SearchRequest) -> dict:
    settings = get_settings()
    if req.namespace_scope == "namespace" or req.namespace is not None:
        namespaces = [caller.namespace(req.namespace)]
    else:
        namespaces = caller.scope(None)
    filters = search.Filters(namespaces, req.thread_id, req.run_id, req.role, named_agent(req))
    vector, model, error = _query_vector(req.query)
    with db.session() as s:
        if vector is not None:
            hits = search.by_vector(
                s, vector, model, filters, req.limit, settings.conversation_search_min_similarity
            )
        else:
            hits = search.by_substring(s, req.query, filters, req.limit)
    chars = settings.conversation_search_excerpt_chars
    return {
        "mode": "vector" if vector is not None else "substring",
        **({"embedder_error": error} if error else {}),
        "namespaces": namespaces,
        "hits": [
            {
                "namespace": hit.namespace,
                "thread_id": hit.thread_id,
                "msg_id": hit.msg_id,
                "role": hit.role,
                "agent": hit.agent,
                "ts": hit.ts.isoformat(),
                "similarity": None if hit.similarity is None else round(hit.similarity, 4),
                "excerpt": hit.content[:chars],
            }
            for hit in hits
        ],
    }
