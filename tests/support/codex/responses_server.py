"""A local OpenAI-compatible Responses API, so the real Codex CLI runs a session against it (a
model provider whose ``base_url`` is ``url``). A turn's first answer is a shell call (``command``,
through the ``exec_command`` tool Codex offers); once its output comes back, the final text
answer (``answer``). Answers stream as the real API streams them: ``response.created``,
``response.output_item.added``, the deltas, ``response.output_item.done``, ``response.completed``
with the usage. Every request body is kept in ``requests``."""

import json
import uuid

from tests.support.local_http import JsonHandler, LocalServer


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _events(response_id: str, model: str, item: dict) -> list[dict]:
    response = {
        "id": response_id,
        "object": "response",
        "status": "in_progress",
        "model": model,
        "output": [],
    }
    events = [
        {"type": "response.created", "response": response},
        {"type": "response.in_progress", "response": response},
    ]
    at = {"item_id": item["id"], "output_index": 0}
    if item["type"] == "message":
        text = item["content"][0]["text"]
        events.append(
            {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}}
        )
        part = {"type": "output_text", "text": "", "annotations": []}
        events.append({"type": "response.content_part.added", **at, "content_index": 0, "part": part})
        for piece in _pieces(text, 12):
            events.append({"type": "response.output_text.delta", **at, "content_index": 0, "delta": piece})
        events.append({"type": "response.output_text.done", **at, "content_index": 0, "text": text})
    else:
        events.append(
            {"type": "response.output_item.added", "output_index": 0, "item": {**item, "arguments": ""}}
        )
        for piece in _pieces(item["arguments"], 8):
            events.append({"type": "response.function_call_arguments.delta", **at, "delta": piece})
        done = {"type": "response.function_call_arguments.done", **at, "arguments": item["arguments"]}
        events.append(done)
    events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    usage = {"input_tokens": 40, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 60}  # fmt: skip
    done = {**response, "status": "completed", "output": [item], "usage": usage}
    events.append({"type": "response.completed", "response": done})
    return events


class FakeResponses:
    def __init__(self, command: str, answer: str, tool: dict | None = None) -> None:
        """``tool``: the call the first answer makes instead of the shell call (the function call
        item's ``name``, ``arguments`` and, for an MCP tool, its ``namespace``: ``mcp__<server>``)."""
        self.command, self.answer, self.tool = command, answer, tool
        self.requests: list[dict] = []
        self._server = LocalServer(self._handler())

    @property
    def url(self) -> str:
        return f"{self._server.origin}/v1"

    def start(self) -> "FakeResponses":
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def reply(self, request: dict) -> dict:
        """The output item answering ``request``: the shell call, or the answer once it ran."""
        ran = any(item.get("type") == "function_call_output" for item in request.get("input", []))
        if ran or "exec_command" not in [tool.get("name") for tool in request.get("tools", [])]:
            content = [{"type": "output_text", "text": self.answer, "annotations": []}]
            return {"type": "message", "id": f"msg_{uuid.uuid4().hex}", "status": "completed",
                    "role": "assistant", "content": content}  # fmt: skip
        call = self.tool or {"name": "exec_command", "arguments": {"cmd": self.command}}
        return {"type": "function_call", "id": f"fc_{uuid.uuid4().hex}", "status": "completed",
                "call_id": f"call_{uuid.uuid4().hex[:24]}", **call,
                "arguments": json.dumps(call["arguments"])}  # fmt: skip

    def _handler(self):
        server = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                self.send_json(200, {"object": "list", "data": []})

            def do_POST(self) -> None:
                request = self.read_json()
                if not self.path.split("?")[0].endswith("/responses"):
                    return self.send_json(
                        404, {"error": {"message": self.path, "type": "invalid_request_error"}}
                    )
                server.requests.append(request)
                item = server.reply(request)
                events = _events(f"resp_{uuid.uuid4().hex}", request.get("model", ""), item)
                self.send_events(
                    ((event["type"], event) for event in events), {"content-type": "text/event-stream"}
                )

        return Handler
