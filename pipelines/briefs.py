"""What a session brief is made of, and the rules every revision keeps, whoever writes it (the
model, the deterministic builder, or the agent's own sections).

A brief is a dict of sections. State sections (goal, status, open questions, next steps, key
files, errors, constraints, pointers) are replaced by each revision that carries them; decisions,
dead ends and done items accumulate, the oldest falling off past their cap. A section that reads
as high is never stored. A rendered brief stays under ``MAX_CHARS``: past it, the longest list
loses its oldest item until it fits."""

import re
from dataclasses import dataclass
from typing import Any

from pipelines import screening


@dataclass(frozen=True)
class Section:
    name: str
    title: str
    cap: int | None = None  # items kept; None for a text section
    accumulates: bool = False


SECTIONS = (
    Section("goal", "Goal"),
    Section("status", "Status"),
    Section("decisions", "Decisions", 20, accumulates=True),
    Section("dead_ends", "Dead ends", 12, accumulates=True),
    Section("done", "Done", 16, accumulates=True),
    Section("open_questions", "Open questions", 8),
    Section("next_steps", "Next steps", 8),
    Section("key_files", "Key files", 20),
    Section("errors", "Errors", 8),
    Section("constraints", "Constraints", 10),
    Section("pointers", "Pointers", 12),
)
BY_NAME = {section.name: section for section in SECTIONS}
MAX_CHARS = 11_500  # a rendered brief: "under about 12,000 characters"
TEXT_MAX = 2_000  # a text section as stored
ITEM_MAX = 500  # a list item as stored

KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,159}$")
# A namespace-wide token names a bounded token's brief by its stored form (``bounds_prefix``).
STORED_KEY = re.compile(r"^~(?:[^~]{1,768}~|[^~]{0,768}~[^~]{1,768}~)[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,159}$")


def _escaped(identifier: str) -> str:
    return identifier.replace("%", "%25").replace("~", "%7E")


def bounds_prefix(user_id: str | None, session_id: str | None = None) -> str:
    """Where a bounded token's briefs are stored: ``~<user>~`` for one bounded to a user,
    ``~<user>~<session>~`` for one bounded to a session (an empty user when it is pinned to none).
    The ids are escaped, so that no id ends a prefix early ("a~x" is ``~a%7Ex~``, never ``~a~x~``)
    and a key holds no "~": a stored key belongs to the bounds whose prefix it starts with and has
    no "~" after. A user's prefix also starts the prefixes of that user's sessions (erasure by user
    takes both)."""
    ids = [user_id or ""] if session_id is None else [user_id or "", session_id]
    return "~" + "".join(_escaped(identifier) + "~" for identifier in ids)


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def screened(update: dict) -> tuple[dict, list[str]]:
    """The sections of ``update`` that may be stored (clipped, blanks dropped), and the names of
    those refused because they read as high."""
    kept, refused = {}, []
    for name, value in update.items():
        section = BY_NAME[name]
        if section.cap is None:
            value = _clip(value or "", TEXT_MAX)
            whole = value
        else:
            value = [_clip(item, ITEM_MAX) for item in value if item and item.strip()]
            whole = "\n".join(value)
        if screening.is_high(whole):
            refused.append(name)
        else:
            kept[name] = value
    return kept, refused


def merged(current: dict, update: dict) -> dict:
    """``update`` over ``current``: state sections replaced, accumulating ones added to (an item
    already there is not added twice), each list within its cap."""
    out = dict(current)
    for name, value in update.items():
        section = BY_NAME[name]
        if section.cap is None:
            out[name] = value
        elif section.accumulates:
            seen = {item.casefold() for item in current.get(name, [])}
            added = [item for item in dict.fromkeys(value) if item.casefold() not in seen]
            out[name] = [*current.get(name, []), *added][-section.cap :]
        else:
            out[name] = list(dict.fromkeys(value))[: section.cap]
    return {name: value for name, value in out.items() if value}


def fitted(sections: dict) -> dict:
    """The sections within ``MAX_CHARS`` rendered: the longest list loses its oldest item (an
    accumulating one its first, a state list its last) until they fit; then the text is cut."""
    out: dict[str, Any] = {
        name: list(value) if isinstance(value, list) else value for name, value in sections.items()
    }
    while len(render(out)) > MAX_CHARS:
        lists = [name for name, value in out.items() if isinstance(value, list) and value]
        if not lists:
            over = len(render(out)) - MAX_CHARS
            for name in ("status", "goal"):
                if out.get(name):
                    out[name] = _clip(out[name], max(len(out[name]) - over - 1, 1))
                    break
            continue
        longest = max(lists, key=lambda name: sum(len(item) for item in out[name]))
        out[longest].pop(0 if BY_NAME[longest].accumulates else -1)
    return {name: value for name, value in out.items() if value}


def render(sections: dict, key: str | None = None) -> str:
    """The brief as Markdown, its sections in the document's order."""
    lines = [f"# Brief {key}"] if key else []
    for section in SECTIONS:
        value = sections.get(section.name)
        if not value:
            continue
        lines += ["", f"## {section.title}"] if lines else [f"## {section.title}"]
        lines += [value] if section.cap is None else [f"- {item}" for item in value]
    return "\n".join(lines)


def one_line(sections: dict) -> str:
    """A brief in one line, for listings: its goal and status."""
    said = " — ".join(part for part in (sections.get("goal"), sections.get("status")) if part)
    return _clip(" ".join(said.split()), 200)
