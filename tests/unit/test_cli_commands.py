"""The ``loom`` command loads a command's module only when that command runs: starting it imports
no command's dependencies, and every command it lists resolves to its module and shows its help."""

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import cli

ROOT = Path(__file__).resolve().parents[2]


def test_starting_loom_imports_no_commands_dependencies():
    probe = (
        "import sys, cli\n"
        "heavy = ('sqlalchemy', 'sqlmodel', 'psycopg', 'ops', 'models', 'dramatiq', 'onnxruntime')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("command", list(cli.COMMANDS))
def test_every_command_resolves_and_shows_its_help(command):
    shown = CliRunner().invoke(cli.app, [command, "--help"])
    assert shown.exit_code == 0, shown.output
    assert f" {command} [OPTIONS]" in " ".join(shown.output.split())  # its own usage line


def test_an_unknown_command_is_refused_in_one_line():
    refused = CliRunner().invoke(cli.app, ["no-such-command"])
    assert refused.exit_code == 2 and "No such command" in refused.output


def test_the_banner_names_the_loom_a_person_can_type_from_where_they_stand(monkeypatch, tmp_path):
    import sys
    from pathlib import Path

    from commands.processes import as_typed

    bin_dir = Path(sys.executable).parent
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    assert as_typed() == "loom"  # on PATH: the bare name
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert as_typed(bin_dir.parent.parent) == f"{bin_dir.parent.name}/bin/loom"  # .venv/bin/loom
    assert as_typed(tmp_path) == str(bin_dir / "loom")  # from elsewhere: the whole path
