"""Ops called as the operator, in this process, the way the integration tests set a scene."""

from ops.caller import OPERATOR
from ops.registry import call


def enable_logging(namespace: str, enabled: bool = True) -> None:
    call("conversation.set_logging", OPERATOR, {"namespace": namespace, "enabled": enabled})


def append(namespace: str, thread_id: str, content: str, role: str = "user", **extra) -> dict:
    return call(
        "conversation.append",
        OPERATOR,
        {"namespace": namespace, "thread_id": thread_id, "role": role, "content": content, **extra},
    )


def found_lexically(namespace: str, query: str, **filters) -> list[str]:
    """The msg_ids conversation.search's lexical leg finds, best first."""
    body = {"namespace": namespace, "query": query, "search_mode": "lexical", "limit": 50, **filters}
    return [hit["msg_id"] for hit in call("conversation.search", OPERATOR, body)["hits"]]
