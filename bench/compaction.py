"""Compaction throughput on `loom up`: turns compacted per second, with the local OpenAI-compatible
server answering at once (the pipeline's own cost: claiming, reading the window, embedding the
summary, the writing transaction) and answering after a delay with several worker threads (how
well the stage overlaps model waits).

    .venv/bin/python bench/compaction.py [--threads 40] [--turns 30] [--delays 0,0.5] [--workers 2,4]

Each (delay, worker threads) pair runs on a fresh `loom up`: ``threads`` threads of ``turns``
turns each are appended and embedded, then every thread is compacted at once over HTTP
(keep_recent 10, so ``turns - 10`` turns a thread) and the clock runs until every run is done.
Prints progress on stderr and one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import json
import time

import httpx
from harness import Loom, code_version, log, rounded

from tests.support.openai_server import FakeOpenAI

NAMESPACE = "compaction-bench"
KEEP_RECENT = 10


def fill(http: httpx.Client, threads: int, turns: int) -> None:
    for t in range(threads):
        for i in range(turns):
            content = f"Thread {t}, turn {i}: the export job for region {i % 7} moved to the new ledger."
            body = {"thread_id": f"t{t}", "role": "user" if i % 2 == 0 else "assistant", "content": content}
            http.post("/v1/conversation.append", json=body).raise_for_status()


def settled(conn) -> bool:
    return not conn.execute(
        "SELECT count(*) FROM stage_runs WHERE status IN ('pending', 'running')"
    ).fetchone()[0]


def wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not after {timeout:.0f}s")
        time.sleep(0.05)


def one(server: FakeOpenAI, threads: int, turns: int, delay: float, workers: int) -> dict:
    server.chat_delay = delay
    env = {
        "LOOM_LLM_PROVIDER": "openai",
        "LOOM_LLM_BASE_URL": server.base_url,
        "LOOM_WORKER_THREADS": str(workers),
    }
    with Loom(env=env) as loom:
        http = httpx.Client(
            base_url=loom.base_url, headers={"Authorization": f"Bearer {loom.token([NAMESPACE])}"}, timeout=60
        )
        loom.logging_on(NAMESPACE)
        fill(http, threads, turns)
        with loom.connect() as conn:
            wait(lambda: settled(conn), 600, "the turns to be embedded")
            calls_before = len(server.chat_calls)
            started = time.perf_counter()
            for t in range(threads):
                answer = http.post(
                    "/v1/conversation.compact", json={"thread_id": f"t{t}", "keep_recent": KEEP_RECENT}
                )
                answer.raise_for_status()
            wait(lambda: settled(conn), 600, "the compactions")
            elapsed = time.perf_counter() - started
            outcomes = dict(
                conn.execute(
                    "SELECT status, count(*) FROM stage_runs WHERE stage = 'compaction' GROUP BY status"
                )
            )
            compacted = conn.execute(
                "SELECT coalesce(sum((result->>'messages_summarized')::int), 0) FROM stage_runs "
                "WHERE stage = 'compaction' AND status = 'succeeded'"
            ).fetchone()[0]
    result = {
        "delay_s": delay,
        "worker_threads": workers,
        "threads": threads,
        "turns_compacted": compacted,
        "model_calls": len(server.chat_calls) - calls_before,
        "runs": outcomes,
        "seconds": rounded(elapsed),
        "turns_per_s": rounded(compacted / elapsed),
        "threads_per_s": rounded(outcomes.get("succeeded", 0) / elapsed),
    }
    log(json.dumps(result))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=40)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--delays", default="0,0.5", help="seconds each model answer waits, per run")
    parser.add_argument("--workers", default="2,4", help="worker threads, paired with --delays")
    args = parser.parse_args()
    delays = [float(d) for d in args.delays.split(",")]
    workers = [int(w) for w in args.workers.split(",")]
    if len(delays) != len(workers):
        parser.error("--delays and --workers pair up: give as many of each")
    server = FakeOpenAI().start()
    try:
        runs = [one(server, args.threads, args.turns, d, w) for d, w in zip(delays, workers, strict=True)]
    finally:
        server.stop()
    print(json.dumps({"bench": "compaction", **code_version(), "runs": runs}))


if __name__ == "__main__":
    main()
