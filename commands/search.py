"""``loom search``: conversation.search from the shell, in a fraction of a second when this host
runs Loom's API (``loom up``).

The command then asks that API as the operator, with the data directory's operator key
(``services.keys``), and loads nothing but the standard library's HTTP client (and rich, to print
the table). Without a running
API, or one that does not take this directory's key (another data directory's API on the port), it
searches in this process: it starts the embedded PostgreSQL if need be and loads the embedder, which
takes seconds."""

import http.client
import json
from typing import Annotated
from urllib.parse import urlsplit

import typer

from models.settings import get_settings

TIMEOUT = 60.0  # seconds: a search waits on the API's embedder while it loads after a start


def search(
    namespace: str,
    query: str,
    limit: int = 10,
    thread_id: Annotated[str | None, typer.Option()] = None,
    as_json: Annotated[bool, typer.Option("--json", help="the op's whole JSON answer, for scripts")] = False,
) -> None:
    """conversation.search from the command line: the hits as a table (rank, thread, role, when,
    the legs that found it, the excerpt), or with --json the op's whole answer."""
    body = {"namespace": namespace, "query": query, "limit": limit}
    if thread_id is not None:
        body["thread_id"] = thread_id
    answer = through_the_api(body)
    if answer is None:
        answer = in_this_process(body)
    if as_json:
        print(json.dumps(answer, indent=2))
    else:
        shown(answer)


def shown(answer: dict) -> None:
    """The hits as a table for people, best first; the mode and an embedder's error below it."""
    from commands.console import Column, err, out, say, table  # rich: only for what people read

    columns = (
        Column("#"),
        Column("thread"),
        Column("role", drop=2),
        Column("when", time=True, drop=1),
        Column("found by", drop=3),
        Column("excerpt", wraps=True),
    )
    rows = [
        (
            rank,
            hit["thread_id"],
            hit["role"],
            hit["ts"],
            "+".join(hit["found_by"]),
            " ".join(hit["excerpt"].split()),
        )
        for rank, hit in enumerate(answer["hits"], 1)
    ]
    if rows:
        out.print(table(columns, rows))
    out.print(f"{len(rows)} {'hit' if len(rows) == 1 else 'hits'} ({answer['mode']})", highlight=False)
    if answer.get("embedder_error"):
        say(f"warning: no vector leg: {answer['embedder_error']}", to=err)


def through_the_api(body: dict) -> dict | None:
    """The running API's answer, or None when no API of this data directory answers (refused,
    401 to this directory's key, 503 or another 5xx: this process then decides). The standard
    library's client: httpx and its TLS context would cost this command a fifth of a second."""
    settings = get_settings()
    try:
        key = settings.operator_key_file.read_text().strip()
    except OSError:  # no key yet (the API never started here), or not this user's directory
        return None
    address = urlsplit(settings.local_api_url)
    assert address.hostname is not None  # local_api_url always names its host
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=TIMEOUT)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    try:
        connection.request("POST", "/v1/conversation.search", json.dumps(body), headers)
        response = connection.getresponse()
        answer = json.loads(response.read())
    except (OSError, http.client.HTTPException, ValueError):
        return None
    finally:
        connection.close()
    if response.status == 200:
        return answer
    if 400 <= response.status < 500 and response.status != 401:
        from commands.console import fail  # rich: loaded only to say what is wrong

        reason = answer.get("error") if isinstance(answer, dict) else None
        raise fail(reason or f"HTTP {response.status}")
    return None


def in_this_process(body: dict) -> dict:
    import services
    from commands.common import call

    with services.running(start=services.DATABASE):  # the database and the in-process embedder
        return call("conversation.search", body)
