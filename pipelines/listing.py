"""What a listing (of threads, of saved messages, the dashboard's) shows of a text or of metadata
that a caller may not have screened: nothing that reads as high."""

import copy
from collections.abc import Iterator
from typing import Any

from models.settings import get_settings
from pipelines import screening


def excerpt(text: str | None) -> str:
    """What a listing shows of a text: blank when the shown part (or 1,024 characters past it)
    reads as high."""
    if not text:
        return ""
    chars = get_settings().conversation_search_excerpt_chars
    return "" if screening.excerpt_is_high(text, chars) else text[:chars]


def _leaves(node: Any, key: str = "") -> Iterator[tuple[Any, Any, str]]:
    """(container, index or key, the key it is judged under) for every key and scalar inside."""
    stack = [(key, node)]
    while stack:
        key, node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in list(items):
            name = k if isinstance(k, str) else key  # a list's items are judged under its key
            if isinstance(v, dict | list):
                stack.append((name, v))
            yield node, k, name


def metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """What a listing shows of metadata. Ordinary metadata costs one screen of its ``key = value``
    lines; when those read as high, each key that reads as high is dropped with its value, each
    value that reads as high (alone, or as its key's value: ``{"password": "Tr0ub4dor&3"}``) shown
    blank, and if the rest still reads as high nothing is shown."""

    def lines(meta: dict[str, Any]) -> str:
        return "\n".join(
            f"{name} = {node[k]}" if not isinstance(node[k], dict | list) else str(k)
            for node, k, name in _leaves(meta)
        )

    if not meta or not screening.is_high(lines(meta)):
        return meta
    shown = copy.deepcopy(meta)
    for node, k, name in list(_leaves(shown)):
        if isinstance(k, str) and screening.is_high(k):
            del node[k]
        elif not isinstance(node[k], dict | list):
            value = str(node[k])
            if screening.is_high(value) or screening.is_high(f"{name} = {value}"):
                node[k] = ""
    return {} if screening.is_high(lines(shown)) else shown
