"""Browser tests: headless Chromium (Debian's ``chromium`` package, driven by Playwright; nothing
downloads a browser) against a live ``loom up``. Without Chromium they are not collected, and
the run says so in one line at its end."""

import os
import shutil
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import Loom

CHROMIUM = os.environ.get("LOOM_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
HAVE_CHROMIUM = Path(CHROMIUM).exists()
SKIPPED = f"browser tests skipped: no Chromium at {CHROMIUM} (apt-get install chromium, or set LOOM_CHROMIUM)"
if not HAVE_CHROMIUM:
    collect_ignore_glob = ["test_*.py"]

# Where each test's screenshot goes (one PNG per test, named for it).
OUTPUT = Path(__file__).resolve().parents[2] / ".test-output" / "browser"
# Chromium's own background traffic off: the machine may be offline.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_terminal_summary(terminalreporter):
    if not HAVE_CHROMIUM:
        terminalreporter.write_line(SKIPPED, yellow=True)


@pytest.fixture(scope="session")
def live(tmp_path_factory):
    """One `loom up` for every browser test, with an operator token and an HTTP client."""
    from services import postgres, redis
    from services.ports import free_port

    scratch = tmp_path_factory.mktemp("loom-ui")
    loom = Loom(scratch / "home", free_port())
    loom.up()
    loom.url = f"http://127.0.0.1:{loom.port}"
    loom.admin = loom.cli("tokens", "create", "--all-namespaces", "--role", "admin").strip()
    loom.http = httpx.Client(base_url=loom.url, headers={"Authorization": f"Bearer {loom.admin}"}, timeout=30)
    yield loom
    loom.http.close()
    loom.stop()
    postgres.stop(loom.home)
    redis.stop(loom.home)


@pytest.fixture(scope="module")
def chromium():
    """Module-scoped: Playwright's sync API runs an event loop in this thread while it is open,
    which asyncio.run in other tests (the SDK's) must not find."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def browser_page(chromium, live, request):
    """A fresh browser context (no cookies) a test drives; its screenshot is saved at the end, and
    every request the pages made is checked to have gone to Loom (no font, CDN or other host)."""
    context = chromium.new_context(viewport={"width": 1366, "height": 860})
    page = context.new_page()
    page.set_default_timeout(15_000)
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    yield page
    OUTPUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUTPUT / f"{request.node.name}.png"), full_page=True)
    context.close()
    elsewhere = [url for url in requested if not url.startswith(live.url + "/")]
    assert requested and not elsewhere, elsewhere


def sign_in(page, live, token: str) -> None:
    page.goto(f"{live.url}/ui/conversations")
    page.fill("#token", token)
    page.click("text=Sign in")
    page.wait_for_url("**/ui/conversations")


def op(live, name: str, body: dict, token: str | None = None) -> dict:
    """An op over HTTP, as the operator (or ``token``), to set up what a page then shows."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    answer = live.http.post(f"/v1/{name}", json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.json()
