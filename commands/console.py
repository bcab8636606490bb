"""What every command prints through, and cheaply (``loom search`` imports this and no more of
the CLI): the consoles, the one-line refusal, a body's unset options left out, a time, and the one
way a table is made to fit the terminal."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

import typer
from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

out = Console()
err = Console(stderr=True)

GAP = 2  # columns between two columns of a table (no edges, padding collapsed)
# The fewest columns a wrapping column is narrowed to before anything is dropped: its longest word
# (a trigger, an error's name) whole, within these bounds.
TEXT_ROOM = (16, 24)


def say(line: str, to: Console = out) -> None:
    """A line as it is: no markup read in it (a path or a name may hold [brackets]), no colours, and
    never wrapped, so a pipe or a log gets it whole (a terminal wraps it itself)."""
    to.print(line, markup=False, highlight=False, soft_wrap=True)


def fail(message: str, code: int = 2) -> typer.Exit:
    """One line saying what is wrong, and a non-zero exit (2 unless said otherwise)."""
    say(f"error: {message}", to=err)
    return typer.Exit(code)


def given(body: dict) -> dict:
    """A body without the options left unset (the op's defaults apply)."""
    return {name: value for name, value in body.items() if value is not None}


def when(moment: datetime | str | None, short: bool = False) -> str:
    """A time (or an op's ISO time), to the second; ``short``: month, day and minute alone."""
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    if moment is None:
        return "-"
    return moment.strftime("%m-%d %H:%M") if short else moment.isoformat(timespec="seconds")


@dataclass(frozen=True)
class Column:
    """A table's column, and how it gives way on a narrow terminal. A column neither ``wraps`` nor
    is ``time`` holds values that are read whole (ids, names, statuses, counts): never cut."""

    header: str
    drop: int = 0  # 0: always shown; else left out when the rest does not fit, the lowest first
    wraps: bool = False  # free text: wrapped to the room left (folded inside a long word)
    time: bool = False  # datetimes or ISO strings, shortened (12-01 14:03) before a column is dropped
    none: str = "-"  # what the column shows for no value


def table(columns: Sequence[Column], rows: Iterable[Sequence[object]]) -> Table:
    """The rows as a table as wide as the terminal (``out``'s width; COLUMNS when not a tty), by
    giving way in this order until it fits: headers wrap, wrapping columns narrow (TEXT_ROOM),
    times are shortened, then the columns with a ``drop`` go, the lowest first. A kept column of
    whole values is never cut; ``--json`` is where a script reads everything."""
    rows = [list(row) for row in rows]
    kept = list(range(len(columns)))
    dropping = sorted((c.drop, i) for i, c in enumerate(columns) if c.drop)
    short = False
    while True:
        cells = [[_cell(columns[i], row[i], short) for i in kept] for row in rows]
        shown = [columns[i] for i in kept]
        widths: Sequence[int | None] | None = _widths(shown, cells, out.width)
        if widths is not None:
            break
        if not short and any(c.time for c in shown):
            short = True
        elif dropping:
            kept.remove(dropping.pop(0)[1])
        else:  # nothing left to give (a terminal a few words wide): rich's own layout
            widths = [None] * len(shown)
            break
    fitted = Table(box=box.SIMPLE, show_edge=False, pad_edge=False, collapse_padding=True)
    for column, width in zip(shown, widths, strict=True):
        fitted.add_column(
            Text(column.header, no_wrap=False),  # a header may wrap where its values do not
            width=width,
            no_wrap=not column.wraps,
            overflow="fold",
        )
    for row in cells:
        fitted.add_row(*map(Text, row))  # as they are: a value's [brackets] are no markup
    return fitted


def _cell(column: Column, value: object, short: bool) -> str:
    if value is None:
        return column.none
    if not column.time:
        return str(value)
    assert isinstance(value, datetime | str), f"{column.header}: not a time"  # a time column holds times
    return when(value, short)


def _widths(columns: list[Column], cells: list[list[str]], room: int) -> list[int] | None:
    """Each column's width within ``room``, or None when the columns do not fit: whole values and
    headers first (a header's longest word at the least), then the wrapping columns share what is
    left."""
    wanted = [max([cell_len(c.header), *(cell_len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    least = [
        min(wanted[i], max(TEXT_ROOM[0], min(_longest_word(row[i] for row in cells), TEXT_ROOM[1])))
        if c.wraps
        else max([_longest_word([c.header]), *(cell_len(row[i]) for row in cells)])
        for i, c in enumerate(columns)
    ]
    room -= GAP * (len(columns) - 1)
    if sum(least) > room:
        return None
    # Headers whole where the room allows, then wrapping columns widened from their least.
    widths = [w if not c.wraps else least[i] for i, (c, w) in enumerate(zip(columns, wanted, strict=True))]
    if sum(widths) > room:
        widths = [least[i] if not c.wraps else widths[i] for i, c in enumerate(columns)]
    wrapping = sorted((i for i, c in enumerate(columns) if c.wraps), key=lambda i: wanted[i])
    left = room - sum(w for i, w in enumerate(widths) if i not in wrapping)
    for n, i in enumerate(wrapping):  # an even share each, what a narrower one leaves to the wider
        widths[i] = max(least[i], min(wanted[i], left // (len(wrapping) - n)))
        left -= widths[i]
    return widths


def _longest_word(texts: Iterable[str]) -> int:
    return max((cell_len(word) for text in texts for word in text.split()), default=0)
