"""How the plugins' memory hooks fit what they add into their budget of tokens
(integrations/claude-code/loom/lib/memory.mjs: ``fit``), counted as Loom counts them,
ceil(characters / 4), run by Node."""

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

MEMORY = Path(__file__).resolve().parents[2] / "integrations" / "claude-code" / "loom" / "lib" / "memory.mjs"
ID = "19262207-d8a8-4579-82ae-6f74a20ebaec"


def fit(budget: int, sections: list[dict]) -> str:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    script = (
        f"import {{ fit, tokens }} from {json.dumps(MEMORY.as_uri())};"
        f"const text = fit({budget}, {json.dumps(sections)});"
        "if (tokens(text) !== Math.ceil(text.length / 4)) throw new Error('not the rule');"
        "process.stdout.write(text);"
    )
    ran = subprocess.run(
        ["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=30
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def test_the_most_needed_section_is_taken_first_and_shown_in_its_place():
    held = {"at": 2, "heading": "Pinned:", "lines": [f"- {'p' * 150} [{ID}]"]}
    woven = {"at": 1, "heading": "What You Know", "lines": [f"- fact {n} {'w' * 40}" for n in range(10)]}
    text = fit(100, [held, woven])
    assert math.ceil(len(text) / 4) <= 100
    assert text.startswith("What You Know\n- fact 0") and text.endswith(f"[{ID}]")
    assert "- fact 9" not in text  # what did not fit after the pinned thread is left out


def test_a_clipped_line_keeps_the_id_and_receipt_that_name_its_thread_and_an_empty_section_its_heading():
    line = f'- {"x" * 400} [{ID}] (cue "deploy freeze" was said)'
    text = fit(
        40, [{"at": 0, "heading": "Offered:", "lines": [line]}, {"at": 1, "heading": "None:", "lines": []}]
    )
    assert len(text) <= 160 and text.endswith(f'… [{ID}] (cue "deploy freeze" was said)')
    assert "None:" not in text
    assert fit(10, [{"at": 0, "heading": "Offered:", "lines": [line]}]) == ""  # no useful part fits
