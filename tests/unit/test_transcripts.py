import json

import pytest

from pipelines.transcripts import (
    TranscriptError,
    TranscriptTurn,
    default_thread_id,
    parse_transcript,
    read_transcript,
    turn_msg_id,
)

MARKDOWN = """\
# user
How do I list files?

# assistant

Use `ls`.

Add `-la` for details.


# System
Be brief.
# tool{trailing}
exit 0
""".format(trailing="   ")


def error_of(text: str, source: str = "t.md") -> TranscriptError:
    with pytest.raises(TranscriptError) as info:
        parse_transcript(text, source)
    return info.value


# --- Markdown ---------------------------------------------------------------------------------------


def test_markdown_sections_become_turns_with_their_heading_lines():
    turns = parse_transcript(MARKDOWN)
    assert turns == [
        TranscriptTurn("user", "How do I list files?", 1),
        TranscriptTurn("assistant", "Use `ls`.\n\nAdd `-la` for details.", 4),
        TranscriptTurn("system", "Be brief.", 11),
        TranscriptTurn("tool", "exit 0", 13),
    ]


def test_markdown_headings_are_case_insensitive_and_allow_trailing_spaces():
    turns = parse_transcript("# USER  \nhi\n#\tAssistant\t\nhello\n")
    assert [(t.role, t.content) for t in turns] == [("user", "hi"), ("assistant", "hello")]


def test_a_hash_line_that_is_not_a_role_stays_in_the_content():
    text = "# user\nSummarise\n# assistant\n# Summary\n\n## Details\n# users\ncode:\n    # comment\n"
    turns = parse_transcript(text)
    assert turns[1].content == "# Summary\n\n## Details\n# users\ncode:\n    # comment"


def test_inner_text_is_kept_verbatim_including_indentation_and_inner_blank_lines():
    turns = parse_transcript("# user\n\n    indented code\n\n\n  tail  \n\n")
    assert turns[0].content == "    indented code\n\n\n  tail  "


def test_crlf_files_parse_like_lf_files_with_the_same_line_numbers():
    crlf = MARKDOWN.replace("\n", "\r\n")
    assert parse_transcript(crlf) == parse_transcript(MARKDOWN)


def test_a_leading_byte_order_mark_is_ignored():
    assert parse_transcript("\ufeff# user\nhi\n") == [TranscriptTurn("user", "hi", 1)]


def test_blank_lines_before_the_first_heading_are_allowed():
    assert parse_transcript("\n  \n# user\nhi")[0] == TranscriptTurn("user", "hi", 3)


def test_text_before_the_first_heading_is_an_error_on_its_line():
    err = error_of("\nHello there\n# user\nhi\n")
    assert err.line == 2
    assert str(err).startswith("t.md line 2: text before the first role heading: 'Hello there'")


def test_an_unknown_heading_before_the_first_role_is_reported_as_not_a_role_heading():
    err = error_of("# Notes\n# user\nhi\n")
    assert err.line == 1
    assert "(not a role heading)" in str(err) and "'# Notes'" in str(err)


def test_an_empty_section_is_an_error_naming_the_heading_line():
    err = error_of("# user\nhi\n\n# assistant\n   \n\n# user\nmore\n", source="session.md")
    assert str(err) == "session.md line 4: empty '# assistant' section"


def test_an_empty_last_section_is_an_error():
    assert error_of("# user\nhi\n# assistant\n").line == 3


def test_the_error_message_is_a_single_line():
    err = error_of("x" * 500 + "\n# user\nhi")
    assert "\n" not in str(err) and len(str(err)) < 200


# --- JSON -------------------------------------------------------------------------------------------


def test_a_json_array_of_turns_is_parsed_with_element_lines_and_extra_keys_ignored():
    text = (
        '  [\n  {"role": "user", "content": "hi", "seq": 1},\n'
        '  {\n    "role": "Assistant",\n    "content": "# hello\\n\\nthere"\n  }\n]\n'
    )
    assert parse_transcript(text) == [
        TranscriptTurn("user", "hi", 2),
        TranscriptTurn("assistant", "# hello\n\nthere", 3),
    ]


def test_json_content_is_kept_verbatim():
    text = json.dumps([{"role": "tool", "content": "  spaced\r\n"}])
    assert parse_transcript(text)[0].content == "  spaced\r\n"


def test_invalid_json_reports_the_decoder_line():
    err = error_of('[\n{"role": "user", "content": "hi"},\n{"role": "user" "content": "x"}\n]')
    assert err.line == 3
    assert str(err).startswith("t.md line 3: invalid JSON: Expecting ',' delimiter")


def test_a_json_object_instead_of_an_array_is_an_error():
    err = error_of('\n{"messages": []}')
    assert err.line == 2
    assert err.message.endswith("(a JSON transcript must be an array of turns)")


def test_an_empty_json_array_is_an_error():
    assert error_of("[ ]").message == "empty JSON array, no turns"


@pytest.mark.parametrize(
    ("element", "line", "message"),
    [
        ('"hello"', 3, "turn 1 is a string, expected an object"),
        ('{"content": "x"}', 3, 'turn 1 has no "role"'),
        ('{\n"content": "x",\n"role": "bot"}', 5, 'turn 1 has unknown role "bot"'),
        ('{"role": 7, "content": "x"}', 3, "turn 1 has unknown role 7"),
        ('{"role": "user"}', 3, 'turn 1 has no "content"'),
        ('{"role": "user",\n\n"content": ""}', 5, "turn 1 has empty content"),
        ('{"role": "user", "content": "  \\n "}', 3, "turn 1 has empty content"),
        ('{"role": "user",\n "content": ["a"]}', 4, "turn 1 has an array as content, expected a string"),
        ('{"role": "user", "content": null}', 3, "turn 1 has null as content, expected a string"),
        ('{"role": "user",\n"content": "a\\u0000b"}', 4, "turn 1 has a NUL character in its content"),
    ],
)
def test_each_bad_json_turn_is_reported_on_its_line(element, line, message):
    text = '[\n{"role": "user", "content": "ok"},\n' + element + "\n]"
    err = error_of(text, source="s.json")
    assert err.line == line
    assert err.message.startswith(message)
    assert str(err).startswith(f"s.json line {line}: {message}")


# --- whole-file errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\n \r\n\t", "\ufeff"])
def test_an_empty_file_is_an_error_without_a_line(text):
    err = error_of(text, source="e.md")
    assert err.line is None
    assert str(err) == "e.md: empty file, no turns"


def test_a_raw_nul_byte_is_an_error_on_its_line():
    err = error_of("# user\nhi\n# assistant\nbad\x00byte\n")
    assert (err.line, err.message) == (4, "NUL byte in the transcript")


def test_transcript_error_is_a_value_error_and_formats_without_a_source():
    err = TranscriptError("boom", 3)
    assert isinstance(err, ValueError)
    assert str(err) == "line 3: boom"
    assert str(TranscriptError("boom", None)) == "boom"


def test_read_transcript_reports_invalid_utf8_with_its_line(tmp_path):
    path = tmp_path / "bad.md"
    path.write_bytes(b"# user\nok\n# assistant\n\xff\xfe\n")
    with pytest.raises(TranscriptError) as info:
        read_transcript(str(path))
    assert info.value.line == 4 and "not valid UTF-8" in str(info.value)


def test_read_transcript_reports_a_missing_file_as_a_transcript_error(tmp_path):
    with pytest.raises(TranscriptError, match="cannot read file"):
        read_transcript(str(tmp_path / "nope.md"))


def test_read_transcript_parses_a_crlf_file_from_disk(tmp_path):
    path = tmp_path / "s.md"
    path.write_bytes(b"# user\r\nhi\r\n# assistant\r\nyo\r\n")
    assert read_transcript(str(path)) == [
        TranscriptTurn("user", "hi", 1),
        TranscriptTurn("assistant", "yo", 3),
    ]


# --- stable ids -------------------------------------------------------------------------------------


def test_the_default_thread_id_is_stable_and_depends_on_base_name_and_first_turn():
    turns = parse_transcript(MARKDOWN)
    thread = default_thread_id("/a/b/session.md", turns)
    assert thread.startswith("transcript-") and len(thread) == len("transcript-") + 16
    assert int(thread.removeprefix("transcript-"), 16) >= 0
    assert default_thread_id("/elsewhere/session.md", turns) == thread
    assert default_thread_id("other.md", turns) != thread
    assert default_thread_id("session.md", [TranscriptTurn("user", "different", 1)]) != thread


def test_a_grown_file_keeps_its_thread_id_and_the_ids_of_existing_turns():
    before = parse_transcript(MARKDOWN)
    after = parse_transcript(MARKDOWN + "\n# user\nand one more\n")
    assert len(after) == len(before) + 1
    thread = default_thread_id("session.md", before)
    assert default_thread_id("session.md", after) == thread
    ids_before = [turn_msg_id(thread, i, t) for i, t in enumerate(before)]
    ids_after = [turn_msg_id(thread, i, t) for i, t in enumerate(after)]
    assert ids_after[: len(before)] == ids_before


def test_the_same_file_twice_gives_the_same_message_ids():
    first = [turn_msg_id("th", i, t) for i, t in enumerate(parse_transcript(MARKDOWN))]
    second = [turn_msg_id("th", i, t) for i, t in enumerate(parse_transcript(MARKDOWN))]
    assert first == second
    assert len(set(first)) == len(first)


def test_message_ids_have_the_documented_shape_and_stay_short():
    turn = TranscriptTurn("user", "x" * 10_000, 1)
    msg_id = turn_msg_id("t" * 128, 7, turn)
    assert msg_id.startswith("t00007-")
    assert len(msg_id) == len("t00007-") + 12 and len(msg_id) <= 128
    assert len(turn_msg_id("th", 1_234_567, turn)) <= 128


def test_message_ids_change_with_thread_role_content_or_position():
    turn = TranscriptTurn("user", "hi", 1)
    base = turn_msg_id("th", 0, turn)
    assert turn_msg_id("other", 0, turn) != base
    assert turn_msg_id("th", 0, TranscriptTurn("assistant", "hi", 1)) != base
    assert turn_msg_id("th", 0, TranscriptTurn("user", "hi!", 1)) != base
    assert turn_msg_id("th", 1, turn) != base
    # the line number is not part of the identity: moving a turn within the file keeps its id
    assert turn_msg_id("th", 0, TranscriptTurn("user", "hi", 9)) == base


def test_a_json_turn_keeps_the_time_it_was_said_and_a_bad_time_names_its_line():
    from datetime import UTC, datetime

    text = json.dumps(
        [
            {"role": "user", "content": "a", "ts": "2024-03-01T10:30:00+01:00"},
            {"role": "assistant", "content": "b", "ts": "2024-03-01T09:31:00Z"},
            {"role": "user", "content": "c"},
        ],
        indent=1,
    )
    assert [t.ts for t in parse_transcript(text)] == [
        datetime(2024, 3, 1, 9, 30, tzinfo=UTC),
        datetime(2024, 3, 1, 9, 31, tzinfo=UTC),
        None,
    ]
    for ts in (
        "2024-03-01T10:30:00",
        "yesterday",
        1709285400,
        "2999-01-01T00:00:00Z",
        "1969-01-01T00:00:00Z",
    ):
        bad = json.dumps(
            [{"role": "user", "content": "ok"}, {"role": "user", "content": "x", "ts": ts}], indent=1
        )
        with pytest.raises(TranscriptError) as error:
            parse_transcript(bad)
        assert error.value.line == 9 and "turn 1 has ts" in str(error.value), (ts, str(error.value))
