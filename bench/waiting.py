"""Appends beside calls that wait on runs: `loom up` with one API process, its LLM a local
OpenAI-compatible server answering in --model-seconds (6), then --waiting (100) `session.brief_save`
calls at once (each waits up to --wait-seconds on its window's model call, which two worker
threads take in turn), and appends at --append-rate a second while they wait.

A wait that sleeps on the API's request threads (40) leaves appends queued behind them; a wait
that holds none leaves them their usual time.

    .venv/bin/python bench/waiting.py [--waiting 100] [--model-seconds 6] [--wait-seconds 20]

Prints progress on stderr and one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import httpx
from harness import Loom, code_version, log, percentile, rounded

from tests.support.openai_server import FakeOpenAI

NAMESPACE = "waiting"


async def brief_save(client: httpx.AsyncClient, i: int, wait_seconds: float) -> tuple[float, str]:
    events = [{"kind": "user", "text": f"session {i}: we moved the nightly export to the new ledger"}]
    body = {"brief_key": f"b{i}", "events": events, "wait_seconds": wait_seconds}
    started = time.perf_counter()
    answer = await client.post("/v1/session.brief_save", json=body)
    reason = answer.json().get("reason") if answer.status_code == 200 else str(answer.status_code)
    return time.perf_counter() - started, str(reason)


async def appends(client: httpx.AsyncClient, rate: float, until: float) -> list[float]:
    took: list[float] = []
    i = 0
    while time.monotonic() < until:
        started = time.perf_counter()
        body = {"thread_id": "beside", "role": "user", "msg_id": f"a{i}", "content": f"append {i} beside"}
        answer = await client.post("/v1/conversation.append", json=body)
        answer.raise_for_status()
        took.append(time.perf_counter() - started)
        i += 1
        await asyncio.sleep(max(0.0, 1 / rate - took[-1]))
    return took


async def measure(loom: Loom, token: str, args) -> dict:
    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=args.waiting + 10)
    async with httpx.AsyncClient(
        base_url=loom.base_url, headers=headers, timeout=args.wait_seconds + 60, limits=limits
    ) as client:
        alone = await appends(client, args.append_rate, time.monotonic() + 5)
        log(f"{args.waiting} brief saves waiting on a model of {args.model_seconds} s")
        saves = [asyncio.create_task(brief_save(client, i, args.wait_seconds)) for i in range(args.waiting)]
        await asyncio.sleep(1)  # every save has arrived and waits
        beside = await appends(client, args.append_rate, time.monotonic() + args.wait_seconds - 2)
        waited = await asyncio.gather(*saves)
    reasons: dict[str, int] = {}
    for _, reason in waited:
        reasons[reason] = reasons.get(reason, 0) + 1

    def ms(values: list[float], q: float) -> float | None:
        return rounded(percentile([v * 1000 for v in values], q), 1)

    return {
        "appends_alone_ms": {"n": len(alone), "p50": ms(alone, 50), "p95": ms(alone, 95)},
        "appends_beside_waits_ms": {
            "n": len(beside),
            "p50": ms(beside, 50),
            "p95": ms(beside, 95),
            "max": rounded(max(beside) * 1000, 1),
        },
        "waiting_calls": {"n": len(waited), "p50_s": rounded(percentile([w for w, _ in waited], 50), 1)},
        "waiting_reasons": reasons,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--waiting", type=int, default=100)
    parser.add_argument("--model-seconds", type=float, default=6)
    parser.add_argument("--wait-seconds", type=float, default=20)
    parser.add_argument("--append-rate", type=float, default=10)
    args = parser.parse_args()
    model = FakeOpenAI().start()
    model.chat_delay = args.model_seconds
    env = {
        "LOOM_LLM_PROVIDER": "openai",
        "LOOM_LLM_BASE_URL": model.base_url,
        "LOOM_LLM_TIMEOUT_SECONDS": "60",
    }
    try:
        with Loom(env=env) as loom:
            loom.logging_on(NAMESPACE)
            token = loom.token([NAMESPACE], role="writer")
            figures = asyncio.run(measure(loom, token, args))
    finally:
        model.release.set()
        model.stop()
    print(json.dumps({"bench": "waiting", **vars(args), **figures, **code_version()}))


if __name__ == "__main__":
    main()
