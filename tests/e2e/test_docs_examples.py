"""The docs' examples run as written. Each ```python and ```sh block of docs/*.md, of the
integrations' READMEs and of the README (outside its tour, which test_readme_tour.py runs) is a
whole script, or is marked ``<!-- fragment -->`` on the line before it. They run from a shell
holding only what the docs tell a person to set, against a running `loom up`: a Python example with
LOOM_URL and LOOM_TOKEN (docs/sdk.md) by the virtualenv's Python, a shell one by bash from the
repository's root with what the README's tour sets (LOOM_HOME, LOOM_PORT, TOKEN, URL)."""

import re
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from services import postgres
from tests.e2e.test_readme_tour import json_values

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
DOCS = [
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted(ROOT.glob("integrations/*/README.md")),
    ROOT / "README.md",
]
BLOCK = re.compile(
    r"^([ \t]*)(<!-- (?:fragment|tour: [\w-]+) -->\n[ \t]*)?```(python|sh)\n(.*?)^[ \t]*```", re.DOTALL | re.M
)


def examples(language: str) -> dict[str, str]:
    """Where each whole-script block of ``language`` is ("sdk.md block 1"), and its script."""
    found = {}
    for doc in DOCS:
        blocks = [
            (mark, script) for _, mark, lang, script in BLOCK.findall(doc.read_text()) if lang == language
        ]
        for n, (mark, script) in enumerate(blocks, 1):
            if not mark:
                found[f"{doc.relative_to(ROOT)} block {n}"] = script
    return found


def test_the_docs_have_examples_to_run():
    assert list(examples("python")) == ["docs/sdk.md block 1", "docs/sdk.md block 2"]
    assert list(examples("sh")) == ["docs/http-api.md block 1", "docs/operations.md block 1"]


def test_the_docs_python_examples_run_as_written(loom, scratch):
    loom.up()
    token = loom.cli("tokens", "create", "--namespace", "dev", "--role", "writer", "--recording").strip()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(scratch), "LOOM_URL": f"http://127.0.0.1:{loom.port}",
           "LOOM_TOKEN": token}  # fmt: skip
    printed = {}
    for where, script in examples("python").items():
        ran = subprocess.run([sys.executable, "-"], input=script, env=env, capture_output=True, text=True,
                             timeout=120, cwd=scratch)  # fmt: skip
        assert ran.returncode == 0, (where, ran.stderr[-3000:])
        printed[where] = ran.stdout.splitlines()
    first, second = printed["docs/sdk.md block 1"], printed["docs/sdk.md block 2"]
    assert first == ["resumed with 0 turns", "stored: True", "brief: auto/billing/ledger-move"], first
    assert any("We moved invoices to the new ledger." in line for line in second), second  # block 1's turn
    assert "memory: Ana prefers invoices in EUR." in second, second
    # The user's note reaches the user's next session: not a pack of nothing.
    assert second[-2:] == ["note: next: the EUR export", "pack: next: the EUR export"], second


def test_the_docs_shell_examples_run_as_written(loom, scratch):
    loom.up()
    token = loom.cli("tokens", "create", "--namespace", "demo", "--role", "admin", "--recording").strip()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(scratch), "LOOM_HOME": str(loom.home),
           "LOOM_PORT": str(loom.port), "TOKEN": token, "URL": f"http://127.0.0.1:{loom.port}"}  # fmt: skip
    ran = {}
    for where, script in examples("sh").items():
        done = subprocess.run(["bash", "-e", "-c", script], env=env, capture_output=True, text=True,
                              timeout=300, cwd=ROOT)  # fmt: skip
        assert done.returncode == 0, (where, done.stdout[-2000:], done.stderr[-3000:])
        ran[where] = done
    answers = json_values(ran["docs/http-api.md block 1"].stdout)
    assert len(answers) == 8 and not [a for a in answers if "error" in a], answers
    assert any(hit["thread_id"] == "t1" for hit in answers[-1]["hits"]), answers[-1]  # the search finds t1

    # The backup was restored into a data directory of its own: the same turns are there.
    restored = scratch / "loom-restored"
    try:
        postgres.start(restored)
        with psycopg.connect(postgres.url(restored).replace("+psycopg", ""), connect_timeout=5) as conn:
            turns = conn.execute("SELECT content FROM turns WHERE thread_id = 't1'").fetchall()
        assert turns == [("Noted: the invoices move to the new ledger on Monday.",)]
    finally:
        postgres.stop(restored)
