"""The few rules of English the deterministic builders write by (episodes, night weaving): a count
with its noun in the right number, a list joined as a person writes it, a long list cut short with
"and 3 more", a line clipped to a length. Pure functions."""


def noun(n: int, singular: str, plural: str | None = None) -> str:
    """The noun for ``n`` of it: ``file`` for 1, ``files`` (or ``plural``) for any other."""
    return singular if n == 1 else plural or singular + "s"


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``1 file``, ``3 files``."""
    return f"{n} {noun(n, singular, plural)}"


def times(n: int) -> str:
    """How often: ``once``, ``twice``, ``3 times``."""
    return {1: "once", 2: "twice"}.get(n) or f"{n} times"


def joined(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join(items) if len(items) <= 2 else f"{', '.join(items[:-1])} and {items[-1]}"


def clauses(items: list[str]) -> str:
    """Clauses that may hold lists of their own, the last set apart: ``a, and b``; ``a, b, and c``."""
    return "".join(items) if len(items) <= 1 else f"{', '.join(items[:-1])}, and {items[-1]}"


def listed(items: list[str], shown: int, singular: str) -> str:
    """At most ``shown`` of ``items``, the rest counted: ``a, b and 3 more files``."""
    return more(items[:shown], len(items) - shown, singular)


def more(items: list[str], rest: int, singular: str) -> str:
    """``items`` and, when ``rest`` is not 0, how many more: ``a, b and 1 more file``."""
    return joined([*items, f"{rest} more {noun(rest, singular)}"] if rest > 0 else items)


def clipped(text: str, chars: int) -> str:
    """``text`` on one line, its whitespace single, at most ``chars`` characters (``…`` marks a cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= chars else flat[: chars - 1].rstrip() + "…"


def ended(text: str) -> str:
    """``text`` as a sentence: a full stop added unless it ends with one already (or with ``!``,
    ``?`` or ``…``, a closing quote or bracket after it)."""
    return text if text.rstrip("\"')`").endswith((".", "!", "?", "…")) else text + "."
