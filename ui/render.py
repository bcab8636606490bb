"""What the templates use beyond Jinja2: Markdown (briefs), times, and the health page's charts
drawn as inline SVG (no script, no external request)."""

from datetime import UTC, datetime
from urllib.parse import urlencode

from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from pipelines import listing

# CommonMark with raw HTML off: a brief's text is escaped, never markup of its own; markdown-it
# also refuses javascript:, vbscript: and data: links. Images off: a brief (written from what a
# conversation said) must not make an operator's browser fetch another host.
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).disable("image")


def markdown(text: str | None) -> Markup:
    return Markup(_MARKDOWN.render(text or ""))  # noqa: S704 - rendered with raw HTML off


def _moment(value: str | datetime | None) -> datetime | None:
    if value is None or value == "":
        return None
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def when(value: str | datetime | None) -> str:
    moment = _moment(value)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") if moment else "—"


def ago(value: str | datetime | None) -> str:
    moment = _moment(value)
    if moment is None:
        return "never"
    seconds = (datetime.now(UTC) - moment).total_seconds()
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if abs(seconds) >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7_200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3_600:.1f} h"


def sparkline(values: list[int], width: int = 360, height: int = 48) -> Markup:
    """A bar chart of ``values`` (oldest first) as inline SVG, labelled with its peak."""
    peak = max(values, default=0) or 1
    bar = width / max(len(values), 1)
    bars = "".join(
        f'<rect x="{i * bar:.1f}" y="{height - v / peak * height:.1f}" width="{max(bar - 1, 1):.1f}" '
        f'height="{v / peak * height:.1f}"><title>{v}</title></rect>'
        for i, v in enumerate(values)
    )
    label = escape(f"{sum(values)} in the last hour, at most {max(values, default=0)} a minute")
    return Markup(  # noqa: S704 - numbers only, and an escaped label
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{label}">{bars}</svg>'
    )


def url(path: str, **params: object) -> str:
    """A dashboard link, its names as query parameters (a name may hold ``/``, ``?`` or ``&``)."""
    given = {k: v for k, v in params.items() if v is not None and v != ""}
    return f"{path}?{urlencode(given)}" if given else path


FILTERS = {
    "markdown": markdown,
    "when": when,
    "ago": ago,
    "duration": duration,
    "sparkline": sparkline,
    "listed": listing.excerpt,  # a title as listings show it: blank when it reads as high
}
GLOBALS = {"url": url}
