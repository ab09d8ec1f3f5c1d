"""`gpu-advisor mcp`: the MCP server over stdio (docs/mcp.md). The API serves the same server at /mcp."""

from __future__ import annotations

import typer

from service.cli.common import guarded


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def mcp() -> None:
        """Serve the engine's tools and the guide to an MCP client over stdio (Claude Desktop, Cursor); the
        client starts this command. Over HTTP, the API serves the same server at /mcp."""
        from service.errors import DependencyUnavailableError
        from service.settings import get_settings

        try:
            from service.mcp.stdio import run_stdio
        except ImportError as exc:
            raise DependencyUnavailableError(f"The MCP server needs {exc.name}, which is not installed.",
                                             "Install the service extra: pip install -e '.[service]'.") from exc
        run_stdio(get_settings())
