"""How long `loom up` takes to heal, with its default settings: kill -9 the worker mid-batch, then the
embedded PostgreSQL's postmaster, then the embedded Redis, and time each recovery.

- worker: from the kill to every run the dead worker held being done (its lease lapses, the
  next message or the sweep claims them again), and to an empty ledger;
- PostgreSQL: from the kill to the next append answered 200 (the answers in between are counted:
  503s are expected, a 500 is a defect);
- Redis: from the kill to Redis answering again, and to the turns appended meanwhile embedded.

    .venv/bin/python bench/recovery.py [--turns 300]

Prints progress on stderr and one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import time
from collections import Counter

import httpx
import redis as redis_client
from harness import Loom, code_version, live_runs, log, rounded

NAMESPACE = "recovery"


def append(http: httpx.Client, i: int) -> httpx.Response | None:
    content = f"Recovery turn {i}: the nightly export moved to the new ledger, batch {i % 17}."
    body = {"thread_id": f"t{i % 11}", "role": "user", "msg_id": f"m{i}", "content": content}
    try:
        return http.post("/v1/conversation.append", json=body)
    except httpx.HTTPError:
        return None


def wait(predicate, timeout: float, what: str, interval: float = 0.1) -> float:
    """Seconds until ``predicate()`` holds."""
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"{what}: not after {timeout:.0f}s")
        time.sleep(interval)
    return time.monotonic() - started


def pid_in(path) -> int:
    return int(path.read_text().split()[0])


def worker_kill(loom: Loom, http: httpx.Client, turns: int) -> dict:
    with loom.connect() as conn:
        for i in range(turns):
            append(http, i)
        wait(lambda: conn.execute("SELECT count(*) FROM stage_runs WHERE status = 'running'").fetchone()[0],
             60, "a batch in progress", 0.02)  # fmt: skip
        held = [r[0] for r in conn.execute("SELECT id FROM stage_runs WHERE status = 'running'")]
        os.kill(pid_in(loom.home / "run" / "worker.pid"), signal.SIGKILL)
        log(f"killed the worker holding {len(held)} runs")
        killed = time.monotonic()

        def held_done() -> bool:
            query = "SELECT count(*) FROM stage_runs WHERE id = ANY(%s) AND status <> 'succeeded'"
            return conn.execute(query, (held,)).fetchone()[0] == 0

        held_s = wait(held_done, 300, "the dead worker's runs")
        wait(lambda: live_runs(conn) == 0, 300, "an empty ledger")
        all_s = time.monotonic() - killed
        twice = conn.execute(
            "SELECT count(*) FROM (SELECT turn_id FROM embeddings GROUP BY turn_id HAVING count(*) > 1) d"
        ).fetchone()[0]
    log(f"dead worker's runs done {held_s:.1f}s after the kill; ledger empty after {all_s:.1f}s")
    return {"runs_held": len(held), "held_runs_done_s": rounded(held_s, 1),
            "ledger_empty_s": rounded(all_s, 1), "turns_embedded_twice": twice}  # fmt: skip


def postgres_kill(loom: Loom, http: httpx.Client, first: int) -> dict:
    os.kill(pid_in(loom.home / "postgres" / "postmaster.pid"), signal.SIGKILL)
    killed, statuses, i = time.monotonic(), Counter(), first
    while True:
        answer = append(http, i)
        i += 1
        statuses[str(answer.status_code) if answer is not None else "no answer"] += 1
        if answer is not None and answer.status_code == 200:
            break
        if time.monotonic() - killed > 120:
            raise RuntimeError(f"PostgreSQL not back after 120s: {dict(statuses)}")
        time.sleep(0.1)
    back = time.monotonic() - killed
    log(f"PostgreSQL serving appends again {back:.1f}s after the kill ({dict(statuses)})")
    return {"serving_again_s": rounded(back, 1), "answers_meanwhile": dict(statuses), "next_index": i}


def redis_kill(loom: Loom, http: httpx.Client, first: int) -> dict:
    from services import redis as embedded_redis

    client = redis_client.Redis.from_url(embedded_redis.url(loom.home), socket_timeout=1)
    os.kill(pid_in(loom.home / "redis" / "redis.pid"), signal.SIGKILL)
    killed = time.monotonic()
    answers = Counter(
        str(a.status_code) if (a := append(http, first + n)) else "no answer" for n in range(20)
    )

    def answers_ping() -> bool:
        try:
            return client.ping()
        except redis_client.RedisError:
            return False

    back = wait(answers_ping, 120, "Redis")
    with loom.connect() as conn:
        wait(lambda: live_runs(conn) == 0, 300, "the turns appended while Redis was down")
    embedded = time.monotonic() - killed
    log(f"Redis answering {back:.1f}s after the kill; its outage's turns embedded after {embedded:.1f}s")
    return {"serving_again_s": rounded(back, 1), "appends_meanwhile": dict(answers),
            "outage_turns_embedded_s": rounded(embedded, 1)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300, help="turns appended before the worker is killed")
    args = parser.parse_args()
    with Loom() as loom:
        token = loom.token([NAMESPACE])
        loom.logging_on(NAMESPACE)
        http = httpx.Client(base_url=loom.base_url, headers={"Authorization": f"Bearer {token}"}, timeout=15)
        worker = worker_kill(loom, http, args.turns)
        postgres = postgres_kill(loom, http, args.turns)
        redis = redis_kill(loom, http, postgres.pop("next_index"))
    print(json.dumps({"worker": worker, "postgres": postgres, "redis": redis, "code": code_version()}))


if __name__ == "__main__":
    main()
