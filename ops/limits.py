"""What a client may send, and the one walk that checks a request body against it.

Every op's body passes ``check_body`` before its request model sees it (HTTP and CLI alike), so a
value PostgreSQL or the JSON encoder would choke on is a 422 naming its field, never a 500: NUL
bytes and lone surrogates (text and jsonb refuse them), numbers JSON cannot carry (NaN, infinities,
integers past 64 bits) and nesting deeper than metadata may go. The walk is iterative, so no depth
reaches Python's recursion limit.
"""

import json
import math
import re
from typing import Any

from ops.errors import OpError, invalid

MAX_BODY_BYTES = 8 * 1024 * 1024  # a 1,000,000-character turn fits, even \u-escaped
MAX_METADATA_BYTES = 64 * 1024  # metadata as stored (compact JSON, UTF-8)
MAX_METADATA_DEPTH = 16  # levels of objects and arrays inside metadata
MAX_BODY_DEPTH = 1 + MAX_METADATA_DEPTH  # the body object, then metadata: no other field nests
INT_RANGE = range(-(2**63), 2**63)  # what every JSON reader and a bigint column can hold


class Rejected:
    """A literal the parser met that no JSON number may be; left in place so the walk can name the
    field it came in."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _parse_int(literal: str) -> int | Rejected:
    # Checked before int(): past 4,300 digits int() itself raises, and it is quadratic.
    if len(literal.lstrip("-")) > 19:
        return Rejected("integer out of the 64-bit range")
    return int(literal)


def _parse_float(literal: str) -> float | Rejected:
    value = float(literal)
    return value if math.isfinite(value) else Rejected("number out of range")


def _parse_constant(name: str) -> Rejected:
    return Rejected(f"{name} is not a JSON number")


def too_large(cap: int) -> OpError:
    return OpError(413, f"the request body is larger than {cap} bytes")


def parse_body(body: bytes) -> object:
    """A request body as JSON, strictly: NaN, Infinity and out-of-range numbers become ``Rejected``
    (``check_body`` names their field); malformed JSON is a 400."""
    try:
        return json.loads(
            body or b"{}",
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_parse_constant,
        )
    except RecursionError as exc:
        field = _field_nested_too_deep(body)
        raise invalid(f"{field}: nests deeper than {MAX_BODY_DEPTH - 1} levels", field) from exc
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        raise OpError(400, f"the request body is not valid JSON: {exc}") from exc


_TOKEN = re.compile(rb'"((?:[^"\\]|\\.)*)"(\s*:)?|[\[\]{}]')


def _field_nested_too_deep(body: bytes) -> str | None:
    """The top-level key under which ``body`` nests deepest (only on the error path: a scan in
    Python)."""
    depth, key = 0, None
    for m in _TOKEN.finditer(body):
        token = m.group()
        if token in (b"{", b"["):
            depth += 1
            if depth > MAX_BODY_DEPTH:
                return key
        elif token in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and m.group(2):
            key = m.group(1).decode("utf-8", "replace")
    return key


def value_problem(value: Any) -> str | None:
    """Why no op may take this value (a string, a number), or None."""
    if isinstance(value, str):
        if "\x00" in value:
            return "must not contain NUL bytes"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "must not contain lone surrogates (not valid Unicode)"
    elif isinstance(value, Rejected):
        return value.reason
    elif isinstance(value, float) and not math.isfinite(value):
        return "number out of range"
    elif isinstance(value, int) and value not in INT_RANGE:
        return "integer out of the 64-bit range"
    return None


def check_body(body: dict) -> None:
    """Raise a 422 naming the top-level field of the first value no op may take (see the module
    docstring)."""
    stack: list[tuple[Any, str, int]] = [(value, key, 1) for key, value in body.items()]
    for key in body:
        if problem := value_problem(key):
            raise invalid(f"{key!r}: {problem}")
    while stack:
        value, field, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth >= MAX_BODY_DEPTH:
                raise invalid(f"{field}: nests deeper than {MAX_BODY_DEPTH - 1} levels", field)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for k, v in items:
                if isinstance(k, str) and (problem := value_problem(k)):
                    raise invalid(f"{field}: a key {problem}", field)
                stack.append((v, field, depth + 1))
        elif problem := value_problem(value):
            raise invalid(f"{field}: {problem}", field)


def check_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """Metadata is stored as given: bound its size (its depth is bounded by ``check_body``)."""
    size = len(json.dumps(metadata, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_METADATA_BYTES:
        raise ValueError(f"is {size} bytes as JSON; at most {MAX_METADATA_BYTES}")
    return metadata
