"""A local Anthropic-compatible Messages API, so the real Claude Code CLI runs a session against it
(``ANTHROPIC_BASE_URL``). A conversation's first answer is a tool call (``tool``); once its result
comes back, the final text answer (``answer``). Answers stream as the real API streams them
(``message_start``, ``content_block_start``/``_delta``/``_stop``, ``message_delta`` with the stop
reason, ``message_stop``), in small deltas. A request that carries no tools (Claude Code's side
calls: a title, a summary) gets a short text. ``count_tokens`` answers a rough count. Every request
body is kept in ``requests``."""

import json
import uuid

from tests.support.local_http import JsonHandler, LocalServer

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


class FakeAnthropic:
    def __init__(self, tool: dict, answer: str, lead: str = "Let me look.") -> None:
        """``tool``: the call the first answer makes ({"name", "input"}), after the text ``lead``;
        ``answer``: the text of the answer that follows its result."""
        self.tool, self.answer, self.lead = tool, answer, lead
        self.requests: list[dict] = []
        self._server = LocalServer(self._handler())

    @property
    def url(self) -> str:
        return self._server.origin

    def start(self) -> "FakeAnthropic":
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

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

        class Handler(JsonHandler):
            def do_HEAD(self) -> None:
                self.send_json(200, {})

            def do_GET(self) -> None:
                self.send_json(200, {"data": [], "has_more": False})

            def do_POST(self) -> None:
                request = self.read_json()
                path = self.path.split("?")[0]
                if path.endswith("/count_tokens"):
                    return self.send_json(200, {"input_tokens": len(json.dumps(request)) // 4})
                if not path.endswith("/v1/messages"):
                    return self.send_json(
                        404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
                    )
                server.requests.append(request)
                blocks, stop_reason = server.reply(request)
                message_id = f"msg_{uuid.uuid4().hex[:24]}"
                model = request.get("model") or MODEL
                if not request.get("stream"):
                    return self.send_json(200, _message(message_id, model, blocks, stop_reason))
                headers = {
                    "content-type": "text/event-stream; charset=utf-8",
                    "cache-control": "no-cache",
                    "request-id": f"req_{uuid.uuid4().hex[:24]}",
                }
                self.send_events(_events(message_id, model, blocks, stop_reason), headers)

        return Handler
