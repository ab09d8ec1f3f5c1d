"""The optional judge (off unless an LLM is configured) and the `gpu-advisor eval` command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from service.cli.app import build_app
from service.evals.judge import PROMPT_FILE, Judge, build_judge, parse_grade
from service.settings import Settings, get_settings

pytestmark = [pytest.mark.slow]


def test_judge_unavailable_without_an_llm(tmp_path: Path) -> None:
    judge, why = build_judge(Settings(data_dir=tmp_path, llm="offline"))
    assert judge is None
    assert "GPU_ADVISOR_LLM=openai" in why


def test_judge_without_a_model_name_says_why(tmp_path: Path) -> None:
    judge, why = build_judge(Settings(data_dir=tmp_path, llm="openai", llm_model=""))
    assert judge is None and "GPU_ADVISOR_LLM_MODEL" in why


class FakeLLM:
    """Records the prompt; answers with a fixed grade."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def invoke(self, messages: list[Any]) -> Any:
        self.prompts.append(str(messages[0].content))
        return type("Reply", (), {"content": self.reply})()


def test_judge_renders_its_prompt_and_reads_the_grade() -> None:
    llm = FakeLLM('{"score": 4, "reason": "clear, cites the price source"}')
    grade = Judge(llm, PROMPT_FILE.read_text(encoding="utf-8")).grade(
        ["用Qwen2-7B做问答微调"], "## 推荐配置", {"instance_type": "GT4.4XLARGE96"})
    assert grade == {"score": 4.0, "reason": "clear, cites the price source"}
    prompt = llm.prompts[0]
    assert "- 用Qwen2-7B做问答微调" in prompt and "GT4.4XLARGE96" in prompt and "## 推荐配置" in prompt
    assert "{question}" not in prompt and '{"score": <1-5>' in prompt  # every placeholder filled, braces kept


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ('{"score": 4, "reason": "clear"}', 4.0),
        ('Here you go: {"score": 5, "reason": "ok"} thanks', 5.0),
        ('{"score": 9}', None),  # out of range
        ("no json", None),
    ],
)
def test_parse_grade(reply: str, score: float | None) -> None:
    assert parse_grade(reply)["score"] == score


def test_eval_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_ADVISOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GPU_ADVISOR_LLM", "offline")
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(build_app(), [
            "eval", "--retriever", "bm25", "--no-retrieval", "--no-anchors", "--no-history", "--limit", "2",
            "--only", "zh-qwen2-7b-qa-monthly-budget", "--only", "en-ask-zero3", "--json",
            "--out", str(tmp_path / "out"), "--judge"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[result.stdout.index("{"):])
    assert data["n_scenarios"] == 2
    assert set(data["metrics"]) >= {"slot_accuracy", "config_match", "feasibility", "budget_verdict",
                                    "deadline_verdict", "warnings", "citations", "language", "latency_p50_s",
                                    "latency_p95_s", "slot_accuracy_by_field"}
    assert [s["id"] for s in data["per_scenario"]] == ["zh-qwen2-7b-qa-monthly-budget", "en-ask-zero3"]
    assert any("judge unavailable" in n for n in data["run"]["notes"])
    assert (tmp_path / "out" / "report.html").is_file()


def test_eval_command_rejects_an_unknown_backend() -> None:
    result = CliRunner().invoke(build_app(), ["eval", "--backend", "gpt"])
    assert result.exit_code == 2
    assert "--backend" in result.output
