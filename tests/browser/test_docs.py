"""/docs in headless Chromium with every other host cut off, as on a machine with no network:
Swagger UI comes from Loom itself and renders the ops with their summaries."""

from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.e2e


def test_the_api_docs_render_with_no_network(live, browser_page):
    page = browser_page
    loom = urlsplit(live.url).netloc
    blocked: list[str] = []

    def only_loom(route) -> None:
        if urlsplit(route.request.url).netloc == loom:
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", only_loom)
    page.goto(f"{live.url}/docs")
    append = page.locator(".opblock", has_text="/v1/conversation.append")
    append.wait_for()
    assert "Append one turn" in append.inner_text()
    append.locator(".opblock-summary").click()  # the op's description and its request's fields
    page.locator(".opblock-description-wrapper", has_text="Needs the").first.wait_for()
    assert not blocked, blocked
