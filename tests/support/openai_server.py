"""A local OpenAI-compatible HTTP server standing in for a remote model, so the real openai client
(and instructor over it) runs. It can be told to fail (500), refuse (429), stall, answer garbage
(not JSON), or answer well-formed JSON that is wrong: one vector more than the texts sent, the
extra one first, so a client that cut the list to length would give each text its neighbour's
vector (``wrong_count``), vectors of another width than the one asked for (``wrong_dimension``), or
a chat answer that does not parse into the model asked for (``unparseable``).

Embeddings are a hashed bag of words: texts sharing words get similar unit vectors, so search
over them behaves like a (crude) real model. Chat completions answer the schema instructor sends
(as a tool call, or as JSON content in json mode) with the words of the prompt: a ``title`` field
gets its first five, any other text field its first eighty, so a summary shares the words of what
it summarises. ``reply`` overrides that; every prompt is recorded in ``chat_calls``."""

import hashlib
import json
import math
import random
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def bag_of_words_vector(text: str, dimensions: int) -> list[float]:
    vector = [0.0] * dimensions
    for word in text.lower().split():
        rng = random.Random(hashlib.sha256(word.encode()).digest())
        for i in range(dimensions):
            vector[i] += rng.gauss(0, 1)
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


MODES = ("ok", "fail", "rate_limited", "stall", "garbage", "wrong_count", "wrong_dimension", "unparseable")


def words_reply(request: dict) -> dict:
    """The default chat answer: each field of the asked schema filled from the prompt's words."""
    schema = request["tools"][0]["function"]["parameters"] if "tools" in request else _schema_in(request)
    prompt = request["messages"][-1]["content"]
    words = re.findall(r"[A-Za-z][A-Za-z'-]{2,}", prompt)
    answer = {}
    for name, spec in schema.get("properties", {}).items():
        if spec.get("type") == "string":
            answer[name] = " ".join(words[:5] if "title" in name else words[:80]) or "nothing"
    return answer


def _schema_in(request: dict) -> dict:
    """json mode: instructor puts the schema in the system message, as a JSON object."""
    system = request["messages"][0]["content"]
    start = system.index("{")
    return json.JSONDecoder().raw_decode(system[start:])[0]


class FakeOpenAI:
    def __init__(self) -> None:
        self.mode = "ok"  # one of MODES
        self.release = threading.Event()  # a stalled request answers once this is set
        self.stalled = threading.Event()  # set when a request is held in "stall"
        self.embedding_calls: list[list[str]] = []
        self.chat_calls: list[list[dict]] = []  # every chat request's messages, in order
        self.chat_models: list[str] = []  # and the model each named
        self.reply: Callable[[dict], dict] = words_reply  # the arguments a chat answer carries
        self.chat_delay = 0.0  # seconds each chat answer waits (a slow model)
        self._failures: list[int] = []  # statuses the next chat requests answer with, in order
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, mode: str) -> None:
        if mode not in MODES:  # a misspelt mode would silently answer "ok"
            raise ValueError(f"unknown mode {mode!r}; one of {MODES}")
        self._mode = mode

    def fail_next(self, count: int, status: int = 500) -> None:
        """The next ``count`` chat requests answer ``status`` (then the mode applies again)."""
        self._failures.extend([status] * count)

    def reset(self) -> None:
        self.mode = "ok"
        self.release.clear()
        self.stalled.clear()
        self.embedding_calls.clear()
        self.chat_calls.clear()
        self.chat_models.clear()
        self.reply = words_reply
        self.chat_delay = 0.0
        self._failures.clear()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self._server.shutdown()

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except BrokenPipeError:
                    pass  # the client gave up (its timeout) while the answer was held

            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path.endswith("/chat/completions"):
                    fake.chat_calls.append(request["messages"])
                    fake.chat_models.append(request.get("model"))
                    if fake._failures:
                        return self._send(fake._failures.pop(0), b'{"error": {"message": "model is down"}}')
                if fake.mode == "fail":
                    return self._send(500, b'{"error": {"message": "model is down", "type": "server_error"}}')
                if fake.mode == "rate_limited":
                    return self._send(429, b'{"error": {"message": "slow down", "type": "rate_limit"}}')
                if fake.mode == "garbage":
                    return self._send(200, b"this is not json")
                if self.path.endswith("/chat/completions"):
                    return self._chat(request)
                if self.path.endswith("/embeddings"):
                    texts = request["input"] if isinstance(request["input"], list) else [request["input"]]
                    fake.embedding_calls.append(texts)
                    if fake.mode == "stall":
                        fake.stalled.set()
                        fake.release.wait(30)
                    dims = request.get("dimensions") or 384
                    if fake.mode == "wrong_dimension":
                        dims //= 2
                    answered = ["an extra text", *texts] if fake.mode == "wrong_count" else texts
                    data = [
                        {"object": "embedding", "index": i, "embedding": bag_of_words_vector(t, dims)}
                        for i, t in enumerate(answered)
                    ]
                    body = {
                        "object": "list",
                        "data": data,
                        "model": request["model"],
                        "usage": {"prompt_tokens": 0, "total_tokens": 0},
                    }
                    return self._send(200, json.dumps(body).encode())
                self._send(404, b'{"error": {"message": "unknown path"}}')

            def _chat(self, request: dict) -> None:
                if fake.mode == "stall":
                    fake.stalled.set()
                    fake.release.wait(30)
                time.sleep(fake.chat_delay)
                arguments = json.dumps(fake.reply(request))
                if fake.mode == "unparseable":
                    arguments = "{the answer, not quite json"
                if "tools" in request:
                    function = {"name": request["tools"][0]["function"]["name"], "arguments": arguments}
                    call = {"id": "call_1", "type": "function", "function": function}
                    message = {"role": "assistant", "content": None, "tool_calls": [call]}
                    finish = "tool_calls"
                else:
                    message, finish = {"role": "assistant", "content": arguments}, "stop"
                body = {
                    "id": "chatcmpl-local",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": request["model"],
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
                self._send(200, json.dumps(body).encode())

        return Handler
