"""The README's tour, run as a person runs it: the shell blocks marked `<!-- tour: NAME -->`, in
order, by bash from the repository's root, in a shell holding only what the README tells a user to
set (PATH, HOME, LOOM_HOME, LOOM_PORT), against a running `loom up`. The blocks are read from
README.md, so a changed tour changes what runs here; each step's output is checked.

Not run here: the Claude Code plugin's install (`claude plugin …`), which needs Claude Code itself
and is marked a fragment in the README. Its Loom side is: the `capture` step hands a transcript over
with `loom ingest-transcript`, the request the plugin's Stop hook makes (the hooks themselves run
in tests/e2e/test_claude_code_plugin.py)."""

import json
import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
STEP = re.compile(r"<!-- tour: ([\w-]+) -->\n```sh\n(.*?)```", re.DOTALL)
SEPARATOR = "@@ tour step "
SESSION_FILE = Path("/tmp/loom-session.md")  # where the README's capture step writes its transcript


def tour() -> dict[str, str]:
    """The README's marked blocks by name, in the README's order."""
    return dict(STEP.findall((ROOT / "README.md").read_text()))


def json_values(text: str) -> list:
    """Every JSON value printed one after another (curl ends its answer without a newline)."""
    decoder, values, at = json.JSONDecoder(), [], 0
    while (start := text.find("{", at)) != -1:
        value, at = decoder.raw_decode(text, start)
        values.append(value)
    return values


def excerpts(answer: dict) -> list[tuple[str, str]]:
    return [(hit["thread_id"], hit["excerpt"]) for hit in answer["hits"]]


def check_token(said: str) -> None:
    assert "demo records conversations" in said, said  # stderr of `tokens create --recording`


def check_append(said: str) -> None:
    [answer] = json_values(said)
    assert answer["stored"] is True and answer["thread_id"] == "t1", answer


def table_rows(said: str) -> list[list[str]]:
    """`loom search`'s table as a person reads it: each hit's row, by its words (its rank first)."""
    rows = [line.split() for line in said.splitlines()]
    return [row for row in rows if len(row) > 3 and row[0].isdigit()]  # not "1 hit (hybrid)"


def check_search(said: str) -> None:
    [over_http] = json_values(said)
    assert ("t1", "We moved invoices to the new ledger.") in excerpts(over_http), over_http
    [row] = table_rows(said)  # from the shell: a table
    assert row[:3] == ["1", "t1", "user"] and "We moved invoices" in " ".join(said.split()), said


def check_sdk(said: str) -> None:
    found = said.splitlines()
    assert "t2 Ana prefers invoices in EUR." in found, said
    # The turn step 2 appended over HTTP, as agent "default": bot.search is the namespace's threads.
    assert "t1 We moved invoices to the new ledger." in found, said


def check_capture(said: str) -> None:
    assert "thread export-job: 2 turns appended, 0 already there" in said, said
    assert "export-job" in {row[1] for row in table_rows(said)}, said


def check_dashboard(said: str) -> None:
    """The address answers the sign-in page, and the token signs in to the namespace's pages."""
    url, token = re.search(r"Open (\S+) and sign in with (\S+)", said).groups()
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
    with httpx.Client(follow_redirects=True, timeout=30) as browser:
        sign_in = browser.get(url)
        assert sign_in.status_code == 200 and sign_in.url.path == "/ui/login", sign_in.url
        signed_in = browser.post(f"{origin}/ui/login", data={"token": token}, headers={"Origin": origin})
        assert signed_in.status_code == 200 and signed_in.url.path == "/ui/conversations"
        assert "demo" in signed_in.text


CHECKS = {
    "token": check_token,
    "append": check_append,
    "search": check_search,
    "sdk": check_sdk,
    "capture": check_capture,
    "dashboard": check_dashboard,
}


def test_the_readme_marks_every_step_of_the_tour_and_starts_it_with_make_up():
    steps = tour()
    assert list(steps) == ["start", *CHECKS], list(steps)
    assert steps["start"].startswith("make up ")
    # `make up` is `loom up` from the virtualenv, which the tour's own test starts below.
    assert "up: $(STAMP)\n\t$(VENV)/bin/loom up\n" in (ROOT / "Makefile").read_text()


def test_the_readme_tour_runs_as_written(loom, scratch):
    loom.up()  # what `make up` runs once .venv is there
    steps = tour()
    # stderr into stdout, as a terminal shows them, so that each step's output is read whole; a
    # separator on a line of its own (curl ends its answer without a newline) before each step.
    script = "exec 2>&1\nset -eu\n" + "".join(
        f"printf '\\n{SEPARATOR}{name}\\n'\n{steps[name]}" for name in CHECKS
    )
    user = scratch / "user"
    user.mkdir()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(user),
        "LOOM_HOME": str(loom.home),
        "LOOM_PORT": str(loom.port),
    }
    try:
        ran = subprocess.run(
            ["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )
    finally:
        SESSION_FILE.unlink(missing_ok=True)
    said = dict(re.findall(rf"^{SEPARATOR}(\S+)\n(.*?)(?=^{SEPARATOR}|\Z)", ran.stdout, re.M | re.S))
    assert ran.returncode == 0 and list(said) == list(CHECKS), ran.stdout[-4000:]
    for name, check in CHECKS.items():
        check(said[name])
