"""One op over HTTP (``POST /v1/<op>``), sync or async: the answer as a dict, or a typed error.

A call is retried with backoff only when it cannot have been served: the connection failed (it
never reached Loom, or was dropped before an answer) or Loom answered 503 (its database is away,
or a brief save's model calls all failed). Every other error is raised at once."""

import asyncio
import time

import httpx

from loom.errors import ConnectionFailed, from_answer

RETRIED = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError)
MAX_WAIT = 8.0


def wait_before(attempt: int, response: httpx.Response | None) -> float:
    """Seconds before retry ``attempt`` (1, 2, …): Loom's ``Retry-After`` when it gave one, else
    doubling from a quarter of a second."""
    after = response.headers.get("Retry-After") if response is not None else None
    if after and after.isdigit():
        return min(float(after), MAX_WAIT)
    return min(0.25 * 2 ** (attempt - 1), MAX_WAIT)


def outcome(response: httpx.Response) -> dict:
    try:
        body = response.json()
    except ValueError:
        body = response.text
    if response.status_code >= 400:
        raise from_answer(response.status_code, body)
    return body


class _Settings:
    def __init__(self, base_url: str, token: str | None, max_retries: int) -> None:
        self.max_retries = max_retries
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.base_url = base_url.rstrip("/")

    def url(self, op: str) -> str:
        return f"{self.base_url}/v1/{op}"


class SyncTransport(_Settings):
    def __init__(self, base_url: str, token: str | None, max_retries: int, timeout: float) -> None:
        super().__init__(base_url, token, max_retries)
        self._client = httpx.Client(timeout=timeout, headers=self.headers)

    def call(self, op: str, body: dict) -> dict:
        attempt = 0
        while True:
            attempt += 1
            response = None
            try:
                response = self._client.post(self.url(op), json=body)
            except RETRIED as exc:
                if attempt > self.max_retries:
                    raise ConnectionFailed(0, f"cannot reach Loom at {self.base_url}: {exc}") from exc
            else:
                if response.status_code != 503 or attempt > self.max_retries:
                    return outcome(response)
            time.sleep(wait_before(attempt, response))

    def close(self) -> None:
        self._client.close()


class AsyncTransport(_Settings):
    def __init__(self, base_url: str, token: str | None, max_retries: int, timeout: float) -> None:
        super().__init__(base_url, token, max_retries)
        self._client = httpx.AsyncClient(timeout=timeout, headers=self.headers)

    async def call(self, op: str, body: dict) -> dict:
        attempt = 0
        while True:
            attempt += 1
            response = None
            try:
                response = await self._client.post(self.url(op), json=body)
            except RETRIED as exc:
                if attempt > self.max_retries:
                    raise ConnectionFailed(0, f"cannot reach Loom at {self.base_url}: {exc}") from exc
            else:
                if response.status_code != 503 or attempt > self.max_retries:
                    return outcome(response)
            await asyncio.sleep(wait_before(attempt, response))

    async def close(self) -> None:
        await self._client.aclose()
