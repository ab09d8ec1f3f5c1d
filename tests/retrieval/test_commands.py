"""The CLI commands, registered on a bare typer app as service/cli.py will do."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from service.cli import index_cmd as commands
from service.retrieval.config import RetrievalConfig
from service.retrieval.embeddings import Embedder
from service.settings import get_settings


@pytest.fixture
def app(config: RetrievalConfig, shared_embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> Iterator[typer.Typer]:
    monkeypatch.setenv("GPU_ADVISOR_KNOWLEDGE_DIR", str(config.knowledge_dir))
    monkeypatch.setenv("GPU_ADVISOR_DATA_DIR", str(config.data_dir))
    monkeypatch.delenv("CHROMA_HOST", raising=False)
    get_settings.cache_clear()
    app = typer.Typer()
    commands.register(app)
    yield app
    get_settings.cache_clear()


def test_register_adds_the_three_commands(app: typer.Typer) -> None:
    assert sorted(c.name or "" for c in app.registered_commands) == ["eval-retrieval", "index", "search"]


def test_index_then_search_json(app: typer.Typer) -> None:
    runner = CliRunner()
    first = runner.invoke(app, ["index"])
    assert first.exit_code == 0, first.output
    assert "added" in first.output and "unchanged 0" in first.output
    again = runner.invoke(app, ["index"])
    assert "added 0, updated 0, deleted 0" in again.output
    result = runner.invoke(app, ["search", "spot instances", "包年包月", "-k", "2", "--json", "--cloud", "tencent"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert [e["question"] for e in payload] == ["spot instances", "包年包月"]
    assert [e["lang"] for e in payload] == ["en", "zh"]
    top = payload[0]["passages"][0]
    assert top["id"] == "guide/02-billing.en.md#spot-instances"
    assert set(top) >= {"id", "source", "section", "text", "score", "dense_rank", "bm25_rank", "lang", "ref"}


def test_search_builds_a_missing_index(app: typer.Typer) -> None:
    result = CliRunner().invoke(app, ["search", "FP8", "--json", "--lang", "zh"])
    assert result.exit_code == 0, result.output
    assert all(p["lang"] == "zh" for p in json.loads(result.stdout)[0]["passages"])


def test_bad_lang_is_a_usage_error(app: typer.Typer) -> None:
    result = CliRunner().invoke(app, ["search", "FP8", "--lang", "fr"])
    assert result.exit_code == 2


def test_eval_retrieval_json(app: typer.Typer, tmp_path: Path) -> None:
    cases = {
        "cases": [
            {"id": "fp8-en", "question": "FP8 on Ampere?", "lang": "en", "gold": ["guide/01-precision.en.md#fp8-needs-ada-or-hopper"]},
            {"id": "spot-zh", "question": "竞价实例会被回收吗", "lang": "zh", "gold": ["guide/02-billing.zh.md#竞价实例"]},
            {"id": "gone", "question": "anything", "lang": "en", "gold": ["guide/missing.en.md#x"]},
        ]
    }
    path = tmp_path / "retrieval.yaml"
    path.write_text(yaml.safe_dump(cases, allow_unicode=True), encoding="utf-8")
    result = CliRunner().invoke(app, ["eval-retrieval", "--json", "--file", str(path)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["missing_gold"] == ["guide/missing.en.md#x"]
    assert report["results"]["hybrid"]["zh"]["recall_at_1"] == 1.0
    assert report["results"]["hybrid"]["en"]["n"] == 2
    table = CliRunner().invoke(app, ["eval-retrieval", "--file", str(path)])
    assert "hybrid" in table.stdout and "gold ids not in the index" in table.stdout


def test_user_errors_exit_1_with_the_fix(app: typer.Typer, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval-retrieval", "--file", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 1
    assert "Cannot read" in result.output
