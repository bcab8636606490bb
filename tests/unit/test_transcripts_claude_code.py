"""Claude Code session files (JSON lines) as a transcript format: which entries are turns, what
they carry, and how a bad line is named."""

import json
from datetime import UTC, datetime

import pytest

from pipelines.transcripts import TranscriptError, parse_transcript, turn_msg_id

SESSION = "0b5e2a9c-1111-4222-8333-444455556666"


def user(uuid, content, **extra):
    return {
        "type": "user",
        "uuid": uuid,
        "sessionId": SESSION,
        "timestamp": "2025-01-01T00:00:01.250Z",
        "message": {"role": "user", "content": content},
        **extra,
    }


def assistant(uuid, blocks, message_id=None, **extra):
    return {
        "type": "assistant",
        "uuid": uuid,
        "sessionId": SESSION,
        "timestamp": "2025-01-01T00:00:09Z",
        "message": {"role": "assistant", "content": blocks, "id": message_id or f"msg_{uuid}"},
        **extra,
    }


def text(value):
    return {"type": "text", "text": value}


def thinking(value):
    return {"type": "thinking", "thinking": value, "signature": "sig"}


TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
TOOL_RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}


def jsonl(*entries) -> str:
    return "".join(json.dumps(e) + "\n" for e in entries)


def test_a_user_entry_is_a_turn_with_the_entry_uuid_and_time():
    (turn,) = parse_transcript(jsonl(user("u1", "hello there")))
    assert (turn.role, turn.content, turn.reasoning, turn.line) == ("user", "hello there", None, 1)
    assert turn.ts == datetime(2025, 1, 1, 0, 0, 1, 250000, tzinfo=UTC)
    assert turn_msg_id("any-thread", 7, turn) == "u1"  # the same id, however the file is cut


def test_text_parts_are_joined_and_tool_calls_left_out():
    (turn,) = parse_transcript(jsonl(assistant("a1", [text("First."), TOOL_USE, text("  Second.\n")])))
    assert turn.content == "First.\n\nSecond."


def test_thinking_parts_become_reasoning_and_nul_is_marked_not_lost():
    (turn,) = parse_transcript(jsonl(assistant("a1", [thinking("x\x00y"), text("a\x00b")])))
    assert (turn.content, turn.reasoning) == ("a\ufffdb", "x\ufffdy")


@pytest.mark.parametrize(
    "entry",
    [
        assistant("a1", [TOOL_USE]),
        assistant("a1", [thinking("only thinking")]),
        user("u1", [TOOL_RESULT]),
        user("u1", "   "),
        user("u1", "injected context", isMeta=True),
        assistant("a1", [text("subagent")], isSidechain=True),
        user("u1", "This session is being continued...", isCompactSummary=True),
        user("u1", "<command-name>/clear</command-name>\n<command-message>clear</command-message>"),
        user("u1", [text("[Request interrupted by user]")]),
        {"type": "summary", "summary": "Title", "leafUuid": "x"},
        {"type": "user", "message": {"role": "user", "content": "no uuid"}},
        {"type": "system", "uuid": "s1", "content": "hook ran"},
    ],
    ids=[
        "tool-use",
        "thinking-only",
        "tool-result",
        "blank",
        "meta",
        "sidechain",
        "compact-summary",
        "slash-command",
        "interrupted",
        "summary",
        "no-uuid",
        "system",
    ],
)
def test_entries_without_conversation_text_are_not_turns(entry):
    assert parse_transcript(jsonl(entry)) == []  # a session that said nothing yet is no error


def test_thinking_in_its_own_entry_is_carried_to_the_text_of_the_same_message():
    turns = parse_transcript(
        jsonl(
            user("u1", "question"),
            assistant("a1", [thinking("step one")], message_id="msg_A"),
            assistant("a2", [text("reply")], message_id="msg_A"),
            assistant("a3", [thinking("unrelated")], message_id="msg_B"),
            assistant("a4", [TOOL_USE], message_id="msg_B"),
            user("u5", [TOOL_RESULT]),
            assistant("a6", [text("done")], message_id="msg_C"),
        )
    )
    assert [(t.msg_id, t.content, t.reasoning, t.line) for t in turns] == [
        ("u1", "question", None, 1),
        ("a2", "reply", "step one", 3),
        ("a6", "done", None, 7),
    ]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (jsonl(user("u1", "hi")) + '{"type": "assistant", "uuid": "a2", "mess\n', 2, "invalid JSON line"),
        ("\n" + jsonl(user("u1", "hi")) + "[1, 2]\n", 3, "entry is an array, expected an object"),
        (jsonl(user("u1", "hi", timestamp="yesterday")), 1, "entry 'u1' has ts \"yesterday\""),
        (jsonl(user("u1", "hi", timestamp="2999-01-01T00:00:00Z")), 1, "entry 'u1' has ts 2999"),
    ],
    ids=["cut-line", "not-object", "bad-time", "future"],
)
def test_a_bad_line_is_named(text, line, message):
    with pytest.raises(TranscriptError) as info:
        parse_transcript(text, "s.jsonl")
    assert info.value.line == line and info.value.message.startswith(message)
    assert str(info.value).startswith(f"s.jsonl line {line}: ")


def test_an_entry_id_longer_than_a_msg_id_may_be_is_named_not_cut():
    with pytest.raises(TranscriptError, match="uuid of 129 characters"):
        parse_transcript(jsonl(user("u" * 129, "hi")), "s.jsonl")


@pytest.mark.parametrize(
    "text",
    [
        '{"type": "user", "n": ' + "1" * 5000 + "}\n",  # past Python's int digit limit
        '{"type": "user", "deep": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
        "[" + "[" * 100_000 + "]" * 100_000 + "]",  # the JSON array format too
    ],
    ids=["huge-number", "deep-lines", "deep-array"],
)
def test_json_that_python_cannot_hold_is_a_transcript_error(text):
    with pytest.raises(TranscriptError):
        parse_transcript(text, "s.jsonl")
