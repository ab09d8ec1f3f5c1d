"""The server, composed: the chat API (service/api), MCP over Streamable HTTP at /mcp (service/mcp), the Slack
endpoints when their secrets are set (service/slack) and the web page (service/web), over one set of lazily built
resources (service/edge/resources.py). The adapters never import each other; this is where they meet.

    app = create_app()                       # settings from the environment, real assistant built lazily
    app = create_app(settings, assistant)    # tests inject settings and a fake assistant
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.settings import Settings, get_settings

if TYPE_CHECKING:
    from fastapi import FastAPI

    from service.assistant.types import AssistantProtocol
    from service.catalog.loader import Catalog
    from service.edge.resources import RetrieverLike


def create_app(
    settings: Settings | None = None,
    assistant: AssistantProtocol | None = None,
    *,
    catalog: Catalog | None = None,
    retriever: RetrieverLike | None = None,
) -> FastAPI:
    """Build the app. Anything not injected loads lazily (warm-up thread or first use)."""
    from starlette.routing import Route

    from service.api.app import build_api, finish
    from service.edge.resources import Resources
    from service.mcp.http import PATH as MCP_PATH
    from service.mcp.http import McpEndpoint
    from service.slack.app import mount_slack
    from service.web import mount_web

    resources = Resources(settings or get_settings(), assistant=assistant, catalog=catalog, retriever=retriever)
    mcp = McpEndpoint(resources)  # MCP over Streamable HTTP, same API key (docs/mcp.md)
    app = build_api(resources, mcp.running)
    app.router.routes.append(Route(MCP_PATH, mcp, include_in_schema=False))  # an ASGI app: every method
    mount_slack(app, resources.settings, resources.assistant.get)  # only when the Slack secrets are set
    mount_web(app)
    return finish(app)
