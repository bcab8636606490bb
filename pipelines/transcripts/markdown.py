"""Markdown transcripts: sections headed by a line that is exactly `# <role>` (role one of ROLES,
case-insensitive, trailing spaces allowed). Any other `# ...` line, e.g. `# Notes` or `# users`, is
NOT a heading: it is content, so a Markdown title inside an answer stays in the answer. The flip
side: a line that is exactly `# user` always starts a new turn, even inside a code fence (fences
are not tracked, so an unclosed fence cannot silently swallow the rest of the file); use the JSON
format for such content. Non-blank text before the first role heading is an error."""

from __future__ import annotations

import re

from pipelines.transcripts.common import ROLES, TranscriptError, TranscriptTurn, preview

_HEADING = re.compile(r"#[ \t]+(\w+)[ \t]*", re.ASCII)


def _heading_role(line: str) -> str | None:
    m = _HEADING.fullmatch(line)
    if m and m.group(1).lower() in ROLES:
        return m.group(1).lower()
    return None


def parse(text: str, source: str) -> list[TranscriptTurn]:
    turns: list[TranscriptTurn] = []
    section: tuple[str, int] | None = None  # (role, heading line) of the open section
    body: list[str] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        role = _heading_role(line)
        if role is not None:
            if section is not None:
                turns.append(_close_section(*section, body, source))
            section, body = (role, number), []
        elif section is not None:
            body.append(line)
        elif line.strip():
            hint = " (not a role heading)" if line.startswith("#") else ""
            raise TranscriptError(
                f"text before the first role heading{hint}: {preview(line)}; "
                f"expected a line like '# user' (roles: {', '.join(ROLES)})",
                number,
                source,
            )
    if section is not None:
        turns.append(_close_section(*section, body, source))
    return turns


def _close_section(role: str, line: int, body: list[str], source: str) -> TranscriptTurn:
    # Only whole blank lines are trimmed, so the first line's indentation (e.g. code) is kept.
    first, last = 0, len(body)
    while first < last and not body[first].strip():
        first += 1
    while last > first and not body[last - 1].strip():
        last -= 1
    if first == last:
        raise TranscriptError(f"empty '# {role}' section", line, source)
    return TranscriptTurn(role, "\n".join(body[first:last]), line)
