"""A local OpenAI-compatible HTTP server standing in for a remote model, so the real openai client
code path runs. It can be told to fail, stall, answer garbage (not JSON), or answer well-formed
JSON that is wrong: one vector more than the texts sent, the extra one first, so a client that
cut the list to length would give each text its neighbour's vector (``wrong_count``), or vectors of
another width than the one asked for (``wrong_dimension``).

Embeddings are a hashed bag of words: texts sharing words get similar unit vectors, so search
over them behaves like a (crude) real model."""

import hashlib
import json
import math
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def bag_of_words_vector(text: str, dimensions: int) -> list[float]:
    vector = [0.0] * dimensions
    for word in text.lower().split():
        rng = random.Random(hashlib.sha256(word.encode()).digest())
        for i in range(dimensions):
            vector[i] += rng.gauss(0, 1)
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


MODES = ("ok", "fail", "stall", "garbage", "wrong_count", "wrong_dimension")


class FakeOpenAI:
    def __init__(self) -> None:
        self.mode = "ok"  # one of MODES
        self.release = threading.Event()  # a stalled request answers once this is set
        self.stalled = threading.Event()  # set when a request is held in "stall"
        self.embedding_calls: list[list[str]] = []
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
                self.wfile.write(body)

            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if fake.mode == "fail":
                    return self._send(500, b'{"error": {"message": "model is down", "type": "server_error"}}')
                if fake.mode == "garbage":
                    return self._send(200, b"this is not json")
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

        return Handler
