"""Commands beyond the engine: `run`, and those registered by the retrieval, assistant and API layers."""

from __future__ import annotations

import importlib

import typer

EXAMPLE = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"

# Modules that add their own commands with `register(app)`; each imports its heavy libraries lazily.
_REGISTRARS = ("service.retrieval.commands", "service.cli.ask_cmd", "service.evals_cli", "service.slack.cli")


def register_extras(app: typer.Typer) -> None:
    for name in _REGISTRARS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(app)
