"""CLI tests run the typer app in-process against the shipped knowledge/, isolated from the user's settings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from service.cli.app import build_app
from service.settings import get_settings


@pytest.fixture(autouse=True)
def isolated_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No synced overlay, no user price sheet, no knowledge dir from the environment; settings rebuilt."""
    for var in ("GPU_ADVISOR_KNOWLEDGE_DIR", "GPU_ADVISOR_PRICES_FILE", "GPU_ADVISOR_PRICE_MAX_AGE_DAYS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GPU_ADVISOR_DATA_DIR", str(tmp_path / "data"))
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture(scope="session")
def app() -> typer.Typer:
    return build_app()


@pytest.fixture()
def cli(app: typer.Typer):
    """cli("plan", "--model", "Qwen2-7B") -> click Result (stdout, stderr, exit_code)."""
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, list(args))

    return invoke
