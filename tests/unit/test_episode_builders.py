"""The deterministic episode builders, without a database: a session's tool actions
(``pipelines.episodes``) and a session's turns (``pipelines.night_weaving``). Tables of the cases a
person reads, and properties over generated sessions: grammatical sentences (a count agrees with
its noun, lists joined, long ones cut with "and N more"), what happened named (every file edited,
every command that failed with whether it was fixed), nothing worth remembering writing nothing,
the evidence kept, and no secret quoted."""

import re
import uuid
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pipelines import episodes, night_weaving, prose, screening, tool_actions

LOOM = uuid.UUID(int=7)
SECRET = "sk-proj-AbCdEf1234567890GhIjKlMnOpQrStUvWxYz12"
START = datetime(2026, 11, 30, 10, tzinfo=UTC)


def act(n: int, tool: str, summary: str, outcome: str = "ok", files=(), error=None) -> episodes.Action:
    return episodes.Action(
        n, tool, "0" * 64, summary, outcome, tuple(files), error, START + timedelta(minutes=n)
    )


def edit(n: int, path: str, outcome: str = "ok") -> episodes.Action:
    return act(n, "Edit", path, outcome, [path], None if outcome == "ok" else "String not found in file")


def bash(n: int, command: str, error: str | None = None) -> episodes.Action:
    return act(n, "Bash", command, "error" if error else "ok", error=error)


def contents(actions: list[episodes.Action], where: str | None = "billing/ledger-move") -> list[str]:
    return [e.content for e in episodes.built(LOOM, "s1", where, actions, "claude-code", None)]


# --- the cases a person reads ----------------------------------------------------------------

TOTALS = [
    act(1, "Read", "src/ledger.py", files=["src/ledger.py"]),
    edit(2, "src/ledger.py"),
    bash(3, "pytest -q tests/test_ledger.py", "AssertionError: totals differ\n  at line 40"),
    edit(4, "src/export.py"),
    bash(5, "pytest -q tests/test_ledger.py"),
]


@pytest.mark.parametrize(
    ("actions", "expected"),
    [
        (
            TOTALS,
            [
                "On 2026-11-30, in session s1 on billing/ledger-move, the agent edited src/ledger.py and "
                "src/export.py, and ran `pytest -q tests/test_ledger.py` (failed, then succeeded after an "
                "edit to src/export.py).",
                "On 2026-11-30, in session s1 on billing/ledger-move, `pytest -q tests/test_ledger.py` "
                'failed with "AssertionError: totals differ". It later succeeded after an edit to '
                "src/export.py.",
            ],
        ),
        ([edit(1, "a.py")], ["On 2026-11-30, in session s1 on billing/ledger-move, the agent edited a.py."]),
        (
            [bash(1, "make build"), bash(2, "git commit -m 'totals'")],
            [
                "On 2026-11-30, in session s1 on billing/ledger-move, the agent ran `make build` and "
                "`git commit -m 'totals'` successfully."
            ],
        ),
        (  # one failure is the whole story: told once
            [
                act(1, "shell", "bash -lc 'ls src'"),
                act(
                    2, "shell", "bash -lc 'pytest -q'", "error", error="exit 1: ..F\n== 1 failed, 4 passed =="
                ),
            ],
            [
                'On 2026-11-30, in session s1 on billing/ledger-move, `pytest -q` failed with "1 failed, 4 '
                'passed". It did not succeed later in the session.'
            ],
        ),
        (
            [
                edit(1, "a.py"),
                bash(2, "make"),
                bash(3, "make test", "exit 2"),
                bash(4, "make test", "Error 2"),
            ]
            + [act(5, "mcp__github__create_pr", "mcp__github__create_pr", "error", error="403 Forbidden")],
            [
                "On 2026-11-30, in session s1 on billing/ledger-move, the agent edited a.py, ran `make` "
                "successfully, ran `make test` (failed twice, not fixed), and used `mcp__github__create_pr` "
                "(failed, not fixed).",
                'On 2026-11-30, in session s1 on billing/ledger-move, `make test` failed twice with "exit '
                'code 2". It did not succeed later in the session.',
                "On 2026-11-30, in session s1 on billing/ledger-move, `mcp__github__create_pr` failed with "
                '"403 Forbidden". It did not succeed later in the session.',
            ],
        ),
        (
            [bash(1, "npm test"), edit(2, "a.js"), bash(3, "npm test", "Tests: 2 failed, 5 passed, 7 total")],
            [
                "On 2026-11-30, in session s1, the agent edited a.js, and ran `npm test` (succeeded at "
                "first, then failed, not fixed).",
                'On 2026-11-30, in session s1, `npm test` failed with "Tests: 2 failed, 5 passed, 7 total". '
                "It did not succeed later in the session.",
            ],
        ),
    ],
    ids=["fixed", "one-edit", "commands", "one-failure", "unfixed", "regressed"],
)
def test_the_builder_tells_what_happened(actions, expected):
    where = None if expected[0].startswith("On 2026-11-30, in session s1,") else "billing/ledger-move"
    assert contents(actions, where) == expected


def test_long_lists_are_cut_short_and_counted():
    many = [edit(i, f"src/f{i}.py") for i in range(8)] + [bash(10 + i, f"make t{i}") for i in range(6)]
    [summary] = contents(many)
    assert "edited src/f0.py, src/f1.py, src/f2.py, src/f3.py, src/f4.py and 3 more files," in summary
    assert "ran `make t0`, `make t1`, `make t2`, `make t3` and 2 more commands successfully." in summary
    one_more = [edit(i, f"f{i}") for i in range(6)]
    assert contents(one_more)[0].endswith("f3, f4 and 1 more file.")


@pytest.mark.parametrize(
    "actions",
    [
        [act(1, "Read", "a.py", files=["a.py"]), act(2, "Grep", "TODO"), act(3, "Glob", "**/*.py")],
        [bash(1, "ls -la"), bash(2, "git status && git log --oneline -5"), bash(3, "cat a.py | grep x")],
        [act(1, "shell", "bash -lc \"sed -n '1,80p' src/x.py\""), act(2, "shell", "bash -lc 'rg -n foo'")],
        [
            bash(1, "grep -rn nothing .", "exit 1"),
            act(2, "Read", "gone.py", "error", error="File does not exist"),
        ],
        [
            edit(1, "a.py", "error"),
            act(2, "TodoWrite", "TodoWrite"),
            act(3, "WebFetch", "https://example.com"),
        ],
        [act(1, "mcp__plugin_loom_loom__loom_memory_search", "deploy"), act(2, "Task", "Task")],
    ],
    ids=["reads", "read-only-commands", "codex-reads", "failed-looks", "refused-edit", "other-tools-fine"],
)
def test_a_session_with_nothing_worth_remembering_writes_no_episode(actions):
    assert not episodes.worth_remembering(actions)
    assert contents(actions) == []


@pytest.mark.parametrize(
    ("tool", "summary", "kind"),
    [
        ("Edit", "a.py", tool_actions.CHANGE),
        ("apply_patch", "a.py, b.py", tool_actions.CHANGE),
        ("Bash", "pytest -q", tool_actions.COMMAND),
        ("Bash", "cd api && pytest -q", tool_actions.COMMAND),
        ("Bash", "echo hi > notes.txt", tool_actions.COMMAND),
        ("Bash", "sed -i 's/a/b/' x.py", tool_actions.COMMAND),
        ("Bash", "git commit -m x", tool_actions.COMMAND),
        ("Bash", "FOO=1 ls 2>/dev/null | head", tool_actions.LOOK),
        ("Bash", "git diff --stat", tool_actions.LOOK),
        ("shell", "bash -lc 'cat README.md'", tool_actions.LOOK),
        ("exec_command", "npm run build", tool_actions.COMMAND),
        ("Read", "a.py", tool_actions.LOOK),
        ("mcp__github__create_pr", "mcp__github__create_pr", tool_actions.OTHER),
    ],
)
def test_what_an_action_was(tool, summary, kind):
    assert tool_actions.kind(tool, summary) == kind


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        ("AssertionError: totals differ\n  at line 40", "AssertionError: totals differ"),
        ("Error: Exit code 1\n....F\n===== 2 failed, 3 passed in 0.40s =====", "2 failed, 3 passed in 0.40s"),
        ('Traceback (most recent call last):\n    raise ValueError("x")\nValueError: x', "ValueError: x"),
        ("exit 101: \n   Compiling x\nerror[E0308]: mismatched types", "error[E0308]: mismatched types"),
        ("exit 2: ", "exit code 2"),
        ("failed", ""),
        (None, ""),
        ("x" * 300, "x" * 119 + "…"),
    ],
)
def test_the_line_of_an_error_that_says_what_went_wrong(error, reason):
    assert tool_actions.reason(error) == reason


# --- properties over generated sessions --------------------------------------------------------

FILES = [f"src/m{i}.py" for i in range(9)]
COMMANDS = ["pytest -q", "make lint", "npm test", "cargo build", "go test ./...", "alembic upgrade head"]
LOOKS = ["ls", "git status", "cat README.md | head", "rg -n TODO"]
ERRORS = [
    "AssertionError: totals differ",
    "exit 1: \nE   KeyError: 'total'",
    f"Traceback (most recent call last):\nRuntimeError: token {SECRET} rejected",
    "Error: Exit code 1",
    None,
]

ACTION = st.one_of(
    st.tuples(st.just("edit"), st.sampled_from(FILES), st.sampled_from(["ok", "ok", "error"])),
    st.tuples(st.just("run"), st.sampled_from(COMMANDS), st.sampled_from([None, None, *ERRORS])),
    st.tuples(st.just("codex"), st.sampled_from(COMMANDS), st.sampled_from([None, *ERRORS])),
    st.tuples(st.just("look"), st.sampled_from(LOOKS), st.sampled_from([None, "exit 1"])),
    st.tuples(st.just("read"), st.sampled_from(FILES), st.just(None)),
    st.tuples(
        st.just("mcp"), st.sampled_from(["mcp__gh__pr", "mcp__jira__get"]), st.sampled_from([None, "403"])
    ),
    st.tuples(st.just("secret"), st.just(f"curl -H 'Authorization: Bearer {SECRET}'"), st.just(None)),
)


def made(steps: list[tuple]) -> list[episodes.Action]:
    out = []
    for n, (what, name, extra) in enumerate(steps, 1):
        if what == "edit":
            out.append(edit(n, name, extra))
        elif what == "run":
            out.append(bash(n, name, extra))
        elif what == "codex":
            out.append(act(n, "shell", f"bash -lc '{name}'", "error" if extra else "ok", error=extra))
        elif what == "look":
            out.append(bash(n, name, extra))
        elif what == "read":
            out.append(act(n, "Read", name, files=[name]))
        elif what == "mcp":
            out.append(act(n, name, name, "error" if extra else "ok", error=extra))
        else:
            out.append(bash(n, name))
    return out


WRONG_NUMBER = re.compile(
    r"\b1 (?:more )?(?:files|commands|turns|failing commands|tools)\b"
    r"|\b(?:[02-9]|\d\d+) (?:more )?(?:file|command|turn|failing command|tool)\b(?!s)"
    r"|\b1 times\b|\btool actions\b"
)


def grammatical(text: str) -> None:
    assert not WRONG_NUMBER.search(text), text
    assert re.match(r"(On|From|In) ", text) and re.search(r"[.!?…][\"')`]?$", text), text
    prose_only = re.sub(r"`[^`]*`|\"[^\"]*\"", "`x`", text)  # what is quoted is as it was written
    assert not re.search(r"  | ,|,,|\.\.", prose_only), text
    assert text.count("`") % 2 == 0 and text.count('"') % 2 == 0, text
    assert text.count("(") == text.count(")"), text


def names(actions: list[episodes.Action]) -> list[str | None]:
    """The command each action ran, or the other tool it used (None for an edit or a look)."""
    return [
        tool_actions.command(a.summary)
        if a.tool in ("Bash", "shell") and tool_actions.command(a.summary) in COMMANDS
        else a.tool
        if a.tool.startswith("mcp__")
        else None
        for a in actions
    ]


def says_why(runs: list[episodes.Action]) -> bool:
    why = tool_actions.reason(next(a for a in runs if a.outcome == "error").error)
    return bool(why) and not screening.is_high(why)


def runs_of(actions: list[episodes.Action], name: str | None) -> list[episodes.Action]:
    return [a for a, named in zip(actions, names(actions), strict=True) if named == name]


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(steps=st.lists(ACTION, min_size=1, max_size=30))
@example(  # every edit named, and a fix after edits to "… and 1 more file": found by a full run
    steps=[("run", "make lint", "AssertionError: totals differ")]
    + [("edit", f"src/m{i}.py", "ok") for i in range(4)]
    + [("run", "make lint", None)]
)
@example(  # the file the edited list leaves out (m5) is named by a fix: found by a full run
    steps=[("edit", "src/m2.py", "ok"), ("run", "make lint", "AssertionError: totals differ")]
    + [("edit", f"src/m{i}.py", "ok") for i in (1, 4, 6)]
    + [("run", "make lint", "AssertionError: totals differ"), ("edit", "src/m3.py", "ok")]
    + [("edit", "src/m5.py", "ok"), ("edit", "src/m2.py", "ok"), ("run", "make lint", None)]
)
def test_any_session_is_told_in_grammatical_sentences_that_name_what_happened(steps):
    actions = made(steps)
    written = episodes.built(LOOM, "s1", "billing/ledger-move", actions, "claude-code", "r1")
    texts = [e.content for e in written]
    ids = {a.evidence_id for a in actions}
    worth = any(
        what in ("run", "codex") or (what == "edit" and extra == "ok") or (what == "mcp" and extra)
        for what, _, extra in steps
    )
    # A command that reads as high never reaches the builder (its action is left out of the batch);
    # given one, the builder names it nowhere.
    assert bool(written) == worth
    assert episodes.worth_remembering(actions) == (worth or any(what == "secret" for what, _, _ in steps))
    for episode in written:
        grammatical(episode.content)
        assert SECRET not in episode.content and "Bearer" not in episode.content
        assert episode.kind == "Episodic" and (episode.agent, episode.run_id) == ("claude-code", "r1")
        assert episode.evidence_ids and set(episode.evidence_ids) <= ids
    assert len({e.source_key for e in written}) == len(written)  # each its own key
    if not written:
        return
    edited = list(dict.fromkeys(a.files[0] for a in actions if a.tool == "Edit" and a.outcome == "ok"))
    # The edited list's own clause: a file it leaves out may be named by a fix ("after an edit to
    # …"), which counts its own files.
    clause = re.search(r"edited (.*?)(?:, and |\. |\.$)", texts[0])
    named = [f for f in edited if clause and f in clause.group(1)]
    hidden = re.search(r"and (\d+) more files?$", clause.group(1)) if clause else None
    assert len(named) + (int(hidden.group(1)) if hidden else 0) == len(edited), texts[0]
    failing = [
        n
        for n in dict.fromkeys(names(actions))
        if n and any(a.outcome == "error" for a in runs_of(actions, n))
    ]
    told = {
        m.group(1): t
        for t in texts
        if (m := re.match(r"On [\d-]+, in session s1 on [\w/-]+, `([^`]+)` failed", t))
    }
    # A failure its own episode when its error or its fix says more than the story (in order, 5 at most)
    assert [n for n in failing if n in told] == list(told) and len(told) <= episodes.FAILURE_EPISODES
    for name, text in told.items():
        fixed = runs_of(actions, name)[-1].outcome == "ok"
        assert ("It later succeeded" in text) == fixed and ("did not succeed later" in text) != fixed
        assert ' with "' in text or "It later succeeded after" in text, text
    if len(told) < episodes.FAILURE_EPISODES:  # every failure whose error says why has its episode
        assert all(n in told for n in failing if says_why(runs_of(actions, n)))
    if len(texts) > len(told):  # and the story names each, or counts it
        hidden = re.search(r"and (\d+) more failing (?:commands?|tools?)\b", texts[0])
        assert sum(f"`{n}` (" in texts[0] for n in failing) + (int(hidden.group(1)) if hidden else 0) == len(
            failing
        )


@pytest.mark.parametrize(
    ("items", "shown", "expected"),
    [
        ([], 3, ""),
        (["a"], 3, "a"),
        (["a", "b"], 3, "a and b"),
        (["a", "b", "c"], 3, "a, b and c"),
        (["a", "b", "c", "d"], 3, "a, b, c and 1 more file"),
        (["a", "b", "c", "d", "e"], 2, "a, b and 3 more files"),
    ],
)
def test_lists_are_joined_as_a_person_writes_them(items, shown, expected):
    assert prose.listed(items, shown, "file") == expected


# --- night weaving's episode of a session's turns ------------------------------------------------


def turn(
    seq: int, role: str, content: str, user: str | None = "dana", minutes: int = 0
) -> night_weaving.Turn:
    return night_weaving.Turn(
        seq,
        f"m{seq}",
        role,
        content,
        user if role == "user" else None,
        START + timedelta(minutes=minutes),
        "low",
    )


GUIDE = SimpleNamespace(agent_name="guide")


@pytest.mark.parametrize(
    ("turns", "expected"),
    [
        (
            [turn(1, "user", "Let's ship on Friday.")],
            "In a conversation of guide with dana on 2026-11-30 at 10:00 UTC (1 turn), dana said \"Let's "
            'ship on Friday."',
        ),
        (
            [turn(1, "assistant", "Hello")],
            'In a conversation of guide on 2026-11-30 at 10:00 UTC (1 turn), guide said "Hello".',
        ),
        (
            [turn(1, "user", "a"), turn(2, "assistant", "b", minutes=5), turn(3, "user", "c", "eli", 90)],
            "In a conversation of guide with dana and eli on 2026-11-30 from 10:00 to 11:30 UTC (3 turns), "
            'dana first said "a" and eli last said "c"; guide answered "b".',
        ),
        (
            [turn(1, "user", "x"), turn(2, "assistant", "y"), turn(3, "assistant", "z", minutes=60 * 24)],
            "In a conversation of guide with dana from 2026-11-30 10:00 to 2026-12-01 10:00 UTC (3 turns), "
            'dana said "x"; guide last answered "z".',
        ),
    ],
    ids=["one-turn", "only-the-agent", "two-people", "two-days"],
)
def test_the_turns_episode_is_one_sentence_of_who_when_and_the_key_turns(turns, expected):
    [episode] = night_weaving.built(GUIDE, turns).episodes
    assert episode.content == expected
    assert all(1 <= n <= len(turns) for n in episode.lines)


def test_turns_that_say_nothing_weave_no_episode_and_an_unnamed_agent_is_the_agent():
    assert night_weaving.built(GUIDE, [turn(1, "user", "  \n ")]).episodes == []
    [episode] = night_weaving.built(SimpleNamespace(agent_name="default"), [turn(1, "user", "hi")]).episodes
    assert episode.content.startswith("In a conversation of the agent with dana on")


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(
    said=st.lists(
        st.tuples(
            st.sampled_from(["user", "assistant"]), st.text(min_size=0, max_size=300), st.integers(0, 3000)
        ),
        min_size=1,
        max_size=12,
    )
)
def test_any_conversation_weaves_a_grammatical_sentence(said):
    turns = [
        turn(i, role, content, minutes=m)
        for i, (role, content, m) in enumerate(sorted(said, key=lambda s: s[2]), 1)
    ]
    woven = night_weaving.built(GUIDE, turns).episodes
    if not any(content.strip() for _, content, _ in said):
        assert woven == []
        return
    [episode] = woven
    count = re.search(r"\((\d+) turns?\)", episode.content)
    assert count and int(count.group(1)) == len(turns)
    assert ("(1 turn)" in episode.content) == (len(turns) == 1)
    assert all(1 <= n <= len(turns) for n in episode.lines) and len(episode.content) <= 2_000
