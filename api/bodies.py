"""Reading a request's body: JSON only, within a cap."""

from fastapi import Request

from ops.errors import OpError
from ops.limits import too_large

# What curl sends with -d unless it is told a type: the README's tour and docs/http-api.md call the
# API so, and its body is read as the JSON it is.
CURL_DEFAULT = "application/x-www-form-urlencoded"


def json_type(request: Request) -> None:
    """Refuses (415) a body declared as anything but JSON: ``application/json`` (any parameters,
    a charset among them), an ``application/…+json`` type, curl's default type (``CURL_DEFAULT``),
    or no Content-Type at all (JSON, the only type the API reads)."""
    declared = request.headers.get("content-type")
    if declared is None:
        return
    media = declared.partition(";")[0].strip().lower()
    if media in ("application/json", CURL_DEFAULT) or (
        media.startswith("application/") and media.endswith("+json")
    ):
        return
    raise OpError(415, f"the request body must be JSON (Content-Type: application/json), not {media[:100]!r}")


async def read_body(request: Request, cap: int) -> bytes:
    """The body, refused with a 413 as soon as it is known to pass the cap: from its declared
    length before reading any of it, or while it streams in."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise too_large(cap)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise too_large(cap)
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json_body(request: Request, cap: int) -> bytes:
    """The body of a JSON request (415 for another type), within the cap (413)."""
    json_type(request)
    return await read_body(request, cap)
