"""Reading a request's body within a cap."""

from fastapi import Request

from ops.limits import too_large


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
