"""The README is an entry: it says what Loom is before anything else, and every page it sends a
reader to (docs/*.md, with the heading a link names) and every screenshot is there."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
# A relative Markdown link to a page (docs/*.md, bench/README.md…), with the anchor it may name.
PAGE_LINK = re.compile(r"\]\(([\w./-]+\.md)(?:#([\w-]+))?\)")
OWN_PAGES = sorted(path for path in (ROOT / "docs").glob("*.md") if path.name != "mcp.md")


def anchors(page: Path) -> set[str]:
    """GitHub's anchor of each heading: lowercased, punctuation dropped, spaces made hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def links(page: Path) -> list[tuple[Path, str]]:
    return [
        ((page.parent / target).resolve(), anchor) for target, anchor in PAGE_LINK.findall(page.read_text())
    ]


def test_the_first_ten_lines_say_what_loom_is():
    opening = " ".join(README.read_text().splitlines()[:10])
    for words in (
        "Loom is",
        "memory",
        "agents",
        "secrets",
        "idempotent",
        "no external service",
        "coding agents",
    ):
        assert words in opening, words


def test_the_readme_links_every_docs_page_and_each_one_exists():
    linked = {target for target, _ in links(README)}
    assert {path.resolve() for path in (ROOT / "docs").glob("*.md")} <= linked
    for page in [README, *OWN_PAGES]:
        for target, anchor in links(page):
            assert target.exists(), f"{page.name} links {target}"
            assert not anchor or anchor in anchors(target), f"{page.name} links {target.name}#{anchor}"


def test_the_readmes_contents_name_its_own_headings():
    named = re.findall(r"\]\(#([\w-]+)\)", README.read_text())
    assert named and set(named) <= anchors(README), set(named) - anchors(README)


def test_the_readme_shows_every_screenshot():
    text = README.read_text()
    for screenshot in (ROOT / "docs" / "screenshots").glob("*.png"):
        assert f"](docs/screenshots/{screenshot.name})" in text, screenshot.name
