"""``loom search``: conversation.search from the shell, in a fraction of a second when this host
runs Loom's API (``loom up``).

The command then asks that API as the operator, with the data directory's operator key
(``services.keys``), and loads nothing but an HTTP client. Without a running API, or one that does
not take this directory's key (another data directory's API on the port), it searches in this
process: it starts the embedded PostgreSQL if need be and loads the embedder, which takes seconds."""

import json
from typing import Annotated

import typer

from cli.console import fail, given
from models.settings import get_settings

TIMEOUT = 60.0  # seconds: a search waits on the API's embedder while it loads after a start


def search(
    namespace: str,
    query: str,
    limit: int = 10,
    thread_id: Annotated[str | None, typer.Option()] = None,
) -> None:
    """conversation.search from the command line; prints the JSON answer."""
    body = given({"namespace": namespace, "query": query, "limit": limit, "thread_id": thread_id})
    answer = through_the_api(body)
    if answer is None:
        answer = in_this_process(body)
    print(json.dumps(answer, indent=2))


def through_the_api(body: dict) -> dict | None:
    """The running API's answer, or None when no API of this data directory answers."""
    from loom._transport import SyncTransport  # httpx: what the in-process path would not need
    from loom.errors import ConnectionFailed, LoomError, Unauthorized, Unavailable

    settings = get_settings()
    try:
        key = settings.operator_key_file.read_text().strip()
    except OSError:  # no key yet (the API never started here), or not this user's directory
        return None
    transport = SyncTransport(settings.local_api_url, key, max_retries=0, timeout=TIMEOUT)
    try:
        return transport.call("conversation.search", body)
    except (ConnectionFailed, Unauthorized, Unavailable):
        return None  # no API, another directory's, or its database away: this process decides
    except LoomError as exc:
        raise fail(exc.reason) from exc
    finally:
        transport.close()


def in_this_process(body: dict) -> dict:
    import services
    from cli.common import call

    with services.running(start=services.DATABASE):  # the database and the in-process embedder
        return call("conversation.search", body)
