"""Codex rollout files as Codex 0.171 writes them (tests/support/codex: two real rollouts, long
strings cut), whole and in pieces."""

import json
from pathlib import Path

from pipelines.transcripts import parse_transcript

ROLLOUTS = Path(__file__).resolve().parents[1] / "support" / "codex"


def test_a_rollout_holds_the_users_prompts_and_the_assistants_answers_only():
    text = (ROLLOUTS / "rollout-0.171.0.jsonl").read_text()
    turns = parse_transcript(text, "rollout.jsonl")
    assert [(t.role, t.content, t.msg_id) for t in turns] == [
        ("user", "run echo", "line8"),
        ("assistant", "Done: printed hi.", "line18"),
    ]
    assert turns[0].ts.isoformat() == "2026-12-02T03:46:37.398000+00:00"


def test_a_compacted_rollout_adds_no_turn_for_the_compaction():
    text = (ROLLOUTS / "rollout-compaction-0.171.0.jsonl").read_text()
    assert "compacted" in {json.loads(line)["type"] for line in text.splitlines()}
    assert [t.role for t in parse_transcript(text, "rollout.jsonl")] == ["user", "assistant"]


def test_a_piece_of_a_rollout_keeps_the_keys_of_the_whole_file():
    lines = (ROLLOUTS / "rollout-0.171.0.jsonl").read_text().splitlines(keepends=True)
    whole = parse_transcript("".join(lines), "rollout.jsonl")
    piece = parse_transcript("".join(lines[10:]), "rollout.jsonl", first_line=11)
    assert [t.msg_id for t in piece] == [whole[1].msg_id]


def test_older_records_and_harness_messages_are_left_out():
    def record(kind, payload, ts="2025-09-10T12:00:00.000Z"):
        return json.dumps({"timestamp": ts, "type": kind, "payload": payload}) + "\n"

    def message(role, text):
        return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}

    text = (
        record("turn_context", {"cwd": "/repo", "model": "gpt-5"})
        + record("response_item", message("user", "<environment_context>\n<cwd>/repo</cwd>"))
        + record("response_item", message("developer", "permissions"))
        + record("response_item", message("user", "fix the test"))
        + record("event_msg", {"type": "user_message", "message": "fix the test"})
        + record(
            "response_item", {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"}
        )
        + record(
            "response_item",
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Fixed."}]},
        )
        + record("some_future_record", {"anything": True})
    )
    turns = parse_transcript(text, "rollout.jsonl")
    assert [(t.role, t.content, t.msg_id) for t in turns] == [
        ("user", "fix the test", "line4"),
        ("assistant", "Fixed.", "line7"),
    ]


def test_the_bare_format_of_mid_2025_is_read_too():
    lines = [
        {
            "id": "5973b6c0-94b8-487b-a530-2aeb6098ae0e",
            "timestamp": "2025-07-01T10:00:00.000Z",
            "instructions": None,
        },
        {"record_type": "state"},
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "<user_instructions>x"}],
        },
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list the files"}]},
        {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Two files."}]},
    ]
    turns = parse_transcript("".join(json.dumps(line) + "\n" for line in lines), "rollout.jsonl")
    assert [(t.role, t.content, t.msg_id) for t in turns] == [
        ("user", "list the files", "line4"),
        ("assistant", "Two files.", "line6"),
    ]
