"""Eval fixtures: offline settings on a tmp data dir, one in-process assistant (BM25 knowledge search, no embedding
model) shared by the tests that ask it, and builders for answers the scorers are fed."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from service.catalog.loader import Catalog
from service.evals.runner import assistant_target
from service.evals.targets import AssistantTarget
from service.evals.truth import truth_plan
from service.retrieval.config import RetrievalConfig
from service.settings import Settings


def make_settings(data_dir: Path) -> Settings:
    """Offline, no API key, no user price sheet, embedded Chroma: whatever the environment says."""
    return Settings(data_dir=data_dir, llm="offline", api_key="", prices_file=None, chroma_host="")


@pytest.fixture(scope="session")
def eval_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return make_settings(tmp_path_factory.mktemp("eval-data"))


@pytest.fixture(scope="session")
def eval_target(eval_settings: Settings, catalog: Catalog) -> AssistantTarget:
    """One assistant for every test that asks it (building it costs seconds; asking, tens of ms)."""
    return assistant_target(eval_settings, catalog, "bm25", RetrievalConfig.from_settings(eval_settings))


@pytest.fixture(scope="session")
def qwen_plan(catalog: Catalog) -> dict[str, Any]:
    """The ground truth for the guide's example: Qwen2-7B, 100k samples, ¥3000 a month."""
    plan = truth_plan({"model": "Qwen2-7B", "samples": 100000, "budget_cny": 3000, "budget_period": "month"},
                      catalog).plan
    assert plan is not None
    return plan


def answer(plan: dict[str, Any] | None, workload: dict[str, Any] | None, text: str = "推荐配置如下：腾讯云实例。",
           language: str = "zh", citations: list[dict[str, Any]] | None = None,
           intent: str | None = None) -> dict[str, Any]:
    """An AskResult-shaped answer built around a plan (deep-copied, so tests can tamper with it); its intent is
    plan with a plan and knowledge without one unless given."""
    return {"session_id": "s1", "answer_markdown": text, "language": language,
            "intent": intent or ("plan" if plan is not None else "knowledge"),
            "workload": copy.deepcopy(workload),
            "answer": {"kind": "plan", "plan": copy.deepcopy(plan)} if plan is not None else None,
            "citations": citations if citations is not None else [{"id": "guide/04.zh.md#lora", "title": "t"}],
            "backend": "offline"}
