"""A local Anthropic-compatible Messages API, so the real Claude Code CLI runs a session against it
(``ANTHROPIC_BASE_URL``). A conversation's first answer is a tool call (``tool``); once its result
comes back, the final text answer (``answer``). Answers stream as the real API streams them
(``message_start``, ``content_block_start``/``_delta``/``_stop``, ``message_delta`` with the stop
reason, ``message_stop``), in small deltas. A request that carries no tools (Claude Code's side
calls: a title, a summary) gets a short text. ``count_tokens`` answers a rough count. Every request
body is kept in ``requests``."""

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "claude-sonnet-4-5-20250929"


def _message(message_id: str, model: str, blocks: list[dict], stop_reason: str | None) -> dict:
    usage = {
        "input_tokens": 40,
        "output_tokens": 20,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


def _events(message_id: str, model: str, blocks: list[dict], stop_reason: str) -> list[tuple[str, dict]]:
    start = _message(message_id, model, [], None)
    events = [("message_start", {"type": "message_start", "message": start}), ("ping", {"type": "ping"})]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            empty, deltas = {"type": "text", "text": ""}, _pieces(block["text"], 12)
            steps = [{"type": "text_delta", "text": piece} for piece in deltas]
        else:
            empty = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            steps = [
                {"type": "input_json_delta", "partial_json": piece}
                for piece in _pieces(json.dumps(block["input"]), 8)
            ]
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": empty})
        )
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in steps
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"stop_reason": stop_reason, "stop_sequence": None}
    events.append(
        ("message_delta", {"type": "message_delta", "delta": delta, "usage": {"output_tokens": 20}})
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _has_tool_result(request: dict) -> bool:
    last = request.get("messages", [{}])[-1]
    content = last.get("content")
    return (
        last.get("role") == "user"
        and isinstance(content, list)
        and any(isinstance(block, dict) and block.get("type") == "tool_result" for block in content)
    )


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        pass  # a client that hangs up (Claude Code drops idle connections) is no failure


class FakeAnthropic:
    def __init__(self, tool: dict, answer: str, lead: str = "Let me look.") -> None:
        """``tool``: the call the first answer makes ({"name", "input"}), after the text ``lead``;
        ``answer``: the text of the answer that follows its result."""
        self.tool, self.answer, self.lead = tool, answer, lead
        self.requests: list[dict] = []
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> "FakeAnthropic":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reply(self, request: dict) -> tuple[list[dict], str]:
        """The content blocks and stop reason of the answer to ``request``."""
        if not request.get("tools"):
            return [{"type": "text", "text": "Listing a file"}], "end_turn"
        if _has_tool_result(request):
            return [{"type": "text", "text": self.answer}], "end_turn"
        call = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", **self.tool}
        return [{"type": "text", "text": self.lead}, call], "tool_use"

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_HEAD(self) -> None:
                self._json(200, {})

            def do_GET(self) -> None:
                self._json(200, {"data": [], "has_more": False})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                path = self.path.split("?")[0]
                if path.endswith("/count_tokens"):
                    return self._json(200, {"input_tokens": len(json.dumps(request)) // 4})
                if not path.endswith("/v1/messages"):
                    return self._json(
                        404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
                    )
                server.requests.append(request)
                blocks, stop_reason = server.reply(request)
                message_id = f"msg_{uuid.uuid4().hex[:24]}"
                model = request.get("model") or MODEL
                if not request.get("stream"):
                    message = _message(message_id, model, blocks, stop_reason)
                    return self._json(200, message)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream; charset=utf-8")
                self.send_header("cache-control", "no-cache")
                self.send_header("request-id", f"req_{uuid.uuid4().hex[:24]}")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for event, data in _events(message_id, model, blocks, stop_reason):
                    self._chunk(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                self._chunk(b"")

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def _json(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
