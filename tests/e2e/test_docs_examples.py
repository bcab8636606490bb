"""The docs' Python examples run as written: each ```python block of docs/*.md is a whole script
(or is marked ``<!-- fragment -->`` on the line before it), run by the virtualenv's Python from a
shell holding only what the docs tell a person to set (LOOM_URL, LOOM_TOKEN), against a running
`loom up` with the token docs/sdk.md tells them to make."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"(<!-- fragment -->\n)?```python\n(.*?)```", re.DOTALL)


def examples() -> list[tuple[str, str]]:
    """(where, script) for every whole-script Python block of the docs."""
    found = []
    for doc in sorted((ROOT / "docs").glob("*.md")):
        for n, (fragment, script) in enumerate(BLOCK.findall(doc.read_text()), 1):
            if not fragment:
                found.append((f"{doc.name} block {n}", script))
    return found


def test_the_docs_have_python_examples_to_run():
    assert [where for where, _ in examples()] == ["sdk.md block 1", "sdk.md block 2"]


def test_the_docs_python_examples_run_as_written(loom, scratch):
    loom.up()
    token = loom.cli("tokens", "create", "--namespace", "dev", "--role", "writer", "--recording").strip()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(scratch), "LOOM_URL": f"http://127.0.0.1:{loom.port}",
           "LOOM_TOKEN": token}  # fmt: skip
    printed = {}
    for where, script in examples():
        ran = subprocess.run([sys.executable, "-"], input=script, env=env, capture_output=True, text=True,
                             timeout=120, cwd=scratch)  # fmt: skip
        assert ran.returncode == 0, (where, ran.stderr[-3000:])
        printed[where] = ran.stdout.splitlines()
    first, second = printed["sdk.md block 1"], printed["sdk.md block 2"]
    assert first == ["resumed with 0 turns", "stored: True", "brief: auto/billing/ledger-move"], first
    assert any("We moved invoices to the new ledger." in line for line in second), second  # block 1's turn
    assert "memory: Ana prefers invoices in EUR." in second, second
    # The user's note reaches the user's next session: not a pack of nothing.
    assert second[-2:] == ["note: next: the EUR export", "pack: next: the EUR export"], second
