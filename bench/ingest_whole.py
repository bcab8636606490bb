"""One long transcript handed over whole (conversation.ingest) against the same turns appended one
by one (conversation.append, one client, each request waiting for the last, as a capture script
that parses the file itself does), on a fresh `loom up` each.

    .venv/bin/python bench/ingest_whole.py [--turns 2000]

The transcript is the LongMemEval sessions concatenated in order (its longest session has 32
turns), as a JSON array, into one thread. Reported for each way: the time until the client has its
answer (accepted), until every turn is stored, and until every turn is embedded. Prints progress on
stderr and one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import json
import time

import httpx
from harness import Loom, code_version, log, rounded
from longmemeval import load_records, unique_sessions

NAMESPACE = "ingest-whole"


def transcript_turns(count: int) -> list[dict]:
    turns = []
    for session in unique_sessions(load_records()).values():
        turns += [{"role": t.role, "content": t.content[:20_000]} for t in session]
        if len(turns) >= count:
            return turns[:count]
    return turns


def counts(conn) -> tuple[int, int]:
    """(turns stored, turns embedded) of the namespace."""
    return conn.execute(
        "SELECT (SELECT count(*) FROM turns WHERE namespace = %s), "
        "(SELECT count(*) FROM embeddings WHERE namespace = %s AND vector IS NOT NULL)",
        (NAMESPACE, NAMESPACE),
    ).fetchone()


def one(way: str, turns: list[dict]) -> dict:
    with Loom() as loom:
        loom.logging_on(NAMESPACE)
        http = httpx.Client(
            base_url=loom.base_url,
            headers={"Authorization": f"Bearer {loom.token([NAMESPACE])}"},
            timeout=120,
        )
        warm = {"namespace": NAMESPACE, "thread_id": "warm", "role": "user", "content": "warm the embedder"}
        http.post("/v1/conversation.append", json=warm).raise_for_status()
        with loom.connect() as conn:
            while counts(conn)[1] < 1:
                time.sleep(0.1)
            started = time.perf_counter()
            if way == "whole":
                body = {"namespace": NAMESPACE, "thread_id": "long", "transcript": json.dumps(turns)}
                http.post("/v1/conversation.ingest", json=body).raise_for_status()
            else:
                for i, turn in enumerate(turns):  # its own msg ids: the data set repeats some texts
                    body = {"namespace": NAMESPACE, "thread_id": "long", "msg_id": f"t{i}", **turn}
                    http.post("/v1/conversation.append", json=body).raise_for_status()
            accepted = time.perf_counter() - started
            stored_at, deadline = None, time.monotonic() + 900
            while time.monotonic() < deadline:
                stored, embedded = counts(conn)
                if stored_at is None and stored >= len(turns) + 1:
                    stored_at = time.perf_counter() - started
                if embedded >= len(turns) + 1:  # the warm-up turn too
                    break
                time.sleep(0.1)
            else:
                raise RuntimeError(
                    f"{way}: {counts(conn)} (stored, embedded) of {len(turns) + 1} after 900 s"
                )
            done = time.perf_counter() - started
    result = {
        "way": way,
        "accepted_s": rounded(accepted, 3),
        "stored_s": rounded(stored_at),
        "embedded_s": rounded(done),
    }
    log(json.dumps(result))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=2000)
    args = parser.parse_args()
    turns = transcript_turns(args.turns)
    runs = [one("whole", turns), one("turn_by_turn", turns)]
    print(json.dumps({"bench": "ingest_whole", **code_version(), "turns": len(turns), "runs": runs}))


if __name__ == "__main__":
    main()
