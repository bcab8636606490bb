"""What a coding agent's tool action was, as the episode builder tells it (``pipelines.episodes``):
a change (an edit of files), a command run, a look (reading, searching, listing, planning: how an
agent finds its way, never worth an episode of its own), or another tool; the command as the agent
wrote it (a client's ``bash -lc '…'`` unwrapped); and the line of an error that says what went
wrong. Names are Claude Code's and Codex's tools, compared without case. Pure functions."""

import re

from pipelines import prose

CHANGE, COMMAND, LOOK, OTHER = "change", "command", "look", "other"
CHANGE_TOOLS = frozenset(
    {"edit", "multiedit", "write", "notebookedit", "apply_patch", "edit_file", "write_file"}
)
COMMAND_TOOLS = frozenset(
    {"bash", "shell", "shell_command", "exec_command", "local_shell", "run_terminal_cmd", "powershell"}
)
LOOK_TOOLS = frozenset(
    {
        *("read", "notebookread", "grep", "glob", "ls", "websearch", "webfetch", "web_search"),
        *("view_image", "read_file", "list_dir", "grep_files", "todowrite", "update_plan", "exitplanmode"),
    }
)
# Commands that only read: a shell command made of nothing else is a look.
LOOK_COMMANDS = frozenset(
    {
        *("cat", "head", "tail", "less", "more", "ls", "ll", "tree", "pwd", "cd", "echo", "printf"),
        *("grep", "egrep", "rg", "ag", "ack", "find", "fd", "wc", "which", "whereis", "type", "file"),
        *("stat", "du", "df", "env", "printenv", "date", "whoami", "id", "uname", "hostname", "sort"),
        *("uniq", "cut", "awk", "jq", "diff", "nl", "realpath", "dirname", "basename", "true"),
    }
)
GIT_LOOKS = frozenset(
    {"status", "log", "diff", "show", "branch", "remote", "blame", "rev-parse", "ls-files", "grep"}
)

SHELL = re.compile(r"^(?:\S*/)?(?:ba|z|da)?sh\s+-l?c\s+")  # Codex's `bash -lc <command>`
SEGMENTS = re.compile(r"&&|\|\||[;|]")
ASSIGNMENT = re.compile(r"^\w+=")
WRITES = re.compile(r"(?<![\d&])>>?\s*(?!/dev/null|&)\S")  # a redirection into a file
EXIT = re.compile(r"^exit (-?\d+):\s*")  # Codex's failed command: "exit 1: <output>"
CODE = re.compile(r"(?i)\bexit(?:ed with)?(?: code| status)?:? (-?\d+)")
# A line that says only that it failed ("Error: Exit code 1", "failed"): never the reason.
NOTHING = re.compile(r"(?i)^(?:error:?\s*)?(?:exit(?:ed with)?(?: code| status)?:? -?\d+|failed|fail|error)$")
DECORATION = re.compile(r"^(?:E\s{2,}|[=\-*#>\s]+)|[=\-*#\s]+$")
TALLY = re.compile(r"\b\d+ (?:failed|failing|errors?)\b")  # a test runner's summary line
ERROR_HEAD = re.compile(r"^(?:[\w.]*(?:Error|Exception)\b|(?i:error|fatal|panic)\b|npm ERR!|FAIL)")
ERROR_ANY = re.compile(r"[A-Z]\w*(?:Error|Exception)\b|(?i:\berror\b)")


def kind(tool: str, summary: str) -> str:
    name = tool.lower()
    if name in CHANGE_TOOLS:
        return CHANGE
    if name in COMMAND_TOOLS:
        return LOOK if _looks(command(summary)) else COMMAND
    return LOOK if name in LOOK_TOOLS else OTHER


def command(summary: str) -> str:
    """The command as the agent wrote it: one line, a client's shell wrapper taken off."""
    text = " ".join(summary.split())
    inner = SHELL.sub("", text, count=1)
    if inner != text and len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
        inner = inner[1:-1]
    return inner or text


def _looks(text: str) -> bool:
    return not WRITES.search(text) and all(_reads(segment.split()) for segment in SEGMENTS.split(text))


def _reads(words: list[str]) -> bool:
    while words and ASSIGNMENT.match(words[0]):
        words = words[1:]
    if not words:
        return True
    name = words[0].rsplit("/", 1)[-1]
    if name == "git":
        return next((w for w in words[1:] if not w.startswith("-")), "") in GIT_LOOKS
    if name == "sed":
        return not any(w.startswith("-i") or w == "--in-place" for w in words[1:])
    return name in LOOK_COMMANDS


def reason(error: str | None, chars: int = 120) -> str:
    """The line of an error that says what went wrong: a test runner's tally (``2 failed, 3
    passed``), else a line that starts with an error's name, else one that names an error, else
    the first; else the exit code; "" when the error says nothing more than that it failed."""
    text = (error or "").strip()
    code = (m := EXIT.match(text) or CODE.search(text)) and m.group(1)
    text = EXIT.sub("", text, count=1)
    lines = [
        line
        for raw in text.splitlines()[:500]
        if (line := DECORATION.sub("", raw.strip())) and not NOTHING.match(line)
    ]
    found = (
        next((line for line in lines if TALLY.search(line)), None)
        or next((line for line in lines if ERROR_HEAD.match(line)), None)
        or next((line for line in lines if ERROR_ANY.search(line)), None)
        or (lines[0] if lines else f"exit code {code}" if code else "")
    )
    return prose.clipped(found, chars)
