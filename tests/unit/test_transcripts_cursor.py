"""Cursor's transcripts: the chat export (Markdown) and the agent transcript its hooks point at
(JSON lines), including a piece of one that starts further into the file."""

import json
from datetime import UTC, datetime

import pytest

from pipelines.transcripts import TranscriptError, parse_transcript, turn_msg_id

FENCE = "```"
EXPORT = f"""# Fix login redirect bug
_Exported on 10/23/2025 at 02:13:33 GMT+3 from Cursor (1.7.54)_

---

**User**

Why does login redirect loop? @src/auth.ts

---

**Cursor**

I'll inspect the auth flow first.

Found it: the cookie check runs before the session loads.

{FENCE}typescript
// ... existing code ...
**User**
if (!session) return redirect('/login');
{FENCE}

---

**Cursor**



---

**User**

thanks
"""


def test_an_export_is_read_as_user_and_cursor_sections():
    turns = parse_transcript(EXPORT, "chat.md")
    assert [(t.role, t.line) for t in turns] == [("user", 6), ("assistant", 12), ("user", 32)]
    assert turns[0].content == "Why does login redirect loop? @src/auth.ts"
    assert turns[1].content.startswith("I'll inspect the auth flow first.\n\nFound it")
    assert "**User**\nif (!session)" in turns[1].content  # a mark not after '---' is content
    assert turns[1].content.endswith(FENCE)  # the separator is not part of the answer
    assert turns[2].content == "thanks"  # the empty Cursor section (tool calls only) is no turn


def test_a_later_export_of_the_same_chat_keys_its_old_turns_the_same():
    longer = EXPORT + "\n---\n\n**Cursor**\n\nYou're welcome.\n"
    before, after = parse_transcript(EXPORT), parse_transcript(longer)
    keys = [turn_msg_id("th", i, t) for i, t in enumerate(before)]
    assert [turn_msg_id("th", i, t) for i, t in enumerate(after)][:3] == keys and len(after) == 4


@pytest.mark.parametrize(
    "text",
    [
        "**User**\n\nhello\n\n---\n\n**Cursor**\n\nhi\n",  # no title: the first line is a mark
        "# Title\n_Exported on 2025. 7. 6. at 18시 15분 42초 GMT+9 from Cursor (1.2.0)_\n\n---\n\n"
        "**User**\n\nhello\n\n---\n\n**Cursor**\n\nhi\n",  # a localised date
    ],
    ids=["untitled", "localised"],
)
def test_exports_with_and_without_their_header(text):
    assert [(t.role, t.content) for t in parse_transcript(text)][:2] == [
        ("user", "hello"),
        ("assistant", "hi"),
    ]


def agent_line(role, *texts, extra=None):
    blocks = [{"type": "text", "text": t} for t in texts] + (extra or [])
    return json.dumps({"role": role, "message": {"content": blocks}})


USER = (
    "<timestamp>Tuesday, Apr 28, 2026, 10:15 AM (UTC+3)</timestamp>\n"
    "<attached_files>src/ci.yml</attached_files>\n<user_query>\nWhy is CI failing?\n</user_query>"
)
AGENT = "\n".join(
    [
        agent_line("user", USER),
        agent_line(
            "assistant", "Let me run the suite.", extra=[{"type": "tool_use", "name": "Shell", "input": {}}]
        ),
        json.dumps({"type": "turn_ended", "status": "success"}),
        agent_line("assistant", "The lockfile is stale."),
    ]
)


def test_an_agent_transcript_gives_the_users_query_and_the_agents_text():
    turns = parse_transcript(AGENT + "\n", "cursor.jsonl")
    assert [(t.role, t.content, t.line) for t in turns] == [
        ("user", "Why is CI failing?", 1),
        ("assistant", "Let me run the suite.", 2),
        ("assistant", "The lockfile is stale.", 4),
    ]
    assert turns[0].ts == datetime(2026, 4, 28, 7, 15, tzinfo=UTC)  # 10:15 at UTC+3
    assert turns[1].ts is None  # Cursor writes no time for the agent


def test_a_piece_of_an_agent_transcript_keeps_the_keys_it_has_in_the_whole_file():
    whole = parse_transcript(AGENT + "\n")
    lines = AGENT.split("\n")
    piece = parse_transcript("\n".join(lines[2:]) + "\n", first_line=3)
    assert [turn_msg_id("th", i, t) for i, t in enumerate(piece)] == [turn_msg_id("th", 2, whole[2])]
    assert piece[0].line == 4


def test_a_bad_line_in_a_piece_is_named_by_its_line_in_the_file():
    with pytest.raises(TranscriptError) as info:
        parse_transcript(agent_line("user", "hi") + "\n{oops\n", "c.jsonl", first_line=41)
    assert str(info.value).startswith("c.jsonl line 42: invalid JSON line")


def test_only_json_lines_come_in_pieces():
    with pytest.raises(TranscriptError, match="only a JSON-lines session file is sent in pieces"):
        parse_transcript("# user\nhi\n", first_line=5)


@pytest.mark.parametrize(
    "stamp", ["Friday, Dec 31, 9999, 11:00 PM (UTC-5)", "Monday, Jan 1, 0001, 1:00 AM (UTC+5)"]
)
def test_a_timestamp_at_the_edge_of_time_leaves_the_turn_without_one(stamp):
    (turn,) = parse_transcript(
        agent_line("user", f"<timestamp>{stamp}</timestamp>\n<user_query>hi</user_query>") + "\n"
    )
    assert (turn.content, turn.ts) == ("hi", None)
