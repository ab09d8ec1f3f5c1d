"""/docs renders Swagger UI with the internet out of reach: every request outside 127.0.0.1 is refused.

Regression: the page loaded Swagger UI from a CDN and was blank offline."""

from __future__ import annotations

from typing import Any

from tests.web.conftest import Live


def test_swagger_ui_renders_offline(live: Live, browser: Any) -> None:
    context = browser.new_context(base_url=live.base_url)
    outside: list[str] = []

    def only_here(route: Any) -> None:
        if route.request.url.startswith(live.base_url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", only_here)
    page = context.new_page()
    page.goto("/docs")
    page.locator(".swagger-ui .info .title").wait_for(timeout=15_000)
    assert "GPU Advisor" in page.locator(".swagger-ui .info .title").inner_text()
    assert page.locator(".opblock").count() >= 15  # the operations are listed
    assert outside == []
    context.close()
