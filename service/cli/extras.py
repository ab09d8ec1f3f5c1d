"""Commands beyond the engine, each registered by its own layer (retrieval, assistant, evals, Slack)."""

from __future__ import annotations

import importlib

import typer

# Modules that add their own commands with `register(app)`; each imports its heavy libraries lazily.
_REGISTRARS = ("service.cli.index_cmd", "service.cli.ask_cmd", "service.cli.eval_cmd", "service.cli.slack_cmd",
               "service.cli.calibrate_cmd", "service.cli.serving_cmd", "service.cli.mcp_cmd")


def register_extras(app: typer.Typer) -> None:
    for name in _REGISTRARS:
        importlib.import_module(name).register(app)
