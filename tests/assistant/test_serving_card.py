"""A serving answer carries its card (AskResult.serving_plan): the engine's plan with a few options per cloud, the
pinned GPU's inference, the same figures as the `serving` object, small enough to store with every turn and shown
again when the session is reopened."""

from __future__ import annotations

import json

import pytest

from service.assistant.service import Assistant
from service.questions.serving import CARD_ROWS
from service.settings import Settings
from tests.assistant.test_agent import FakeRetriever


@pytest.fixture(scope="module")
def assistant(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    return Assistant(Settings(data_dir=tmp_path_factory.mktemp("serving-card"), llm="offline", DATABASE_URL=""),
                     retriever_factory=FakeRetriever)


def test_a_serving_answer_carries_a_small_card_with_the_engines_figures(assistant: Assistant) -> None:
    r = assistant.ask("上线一个Qwen2.5-72B的对话服务要几张卡，并发50")
    assert r.intent == "serving" and r.serving is not None and r.serving_plan is not None
    card = r.serving_plan
    plan = card["plan"]
    assert card["inference"] is None  # no GPU named: the plan alone
    for cloud, pick in plan["picks"].items():
        mine = [c["instance_type"] for c in plan["candidates"] if c["cloud"] == cloud]
        assert mine[0] == pick and len(mine) <= CARD_ROWS
    assert plan["rejected"] == [] and card["n_rejected"] > 0 and card["n_candidates"] >= len(plan["candidates"])
    top = plan["candidates"][0]
    assert top["instance_type"] == r.serving["instance"]["instance_type"]
    assert top["sizing"]["gpus_per_replica"] == r.serving["gpus_per_replica"]
    assert top["cny_per_million_output_tokens"] == r.serving["cny_per_million_tokens"]
    assert top["launch"]["vllm"].startswith("vllm serve ") and top["launch"]["sglang"]
    assert len(json.dumps(card)) < 40_000  # stored with the turn; the full plan is about 100 kB


def test_a_pinned_gpu_carries_its_inference_and_survives_a_reload(assistant: Assistant) -> None:
    first = assistant.ask("上线一个Qwen2.5-72B的对话服务要几张卡，并发50")
    r = assistant.ask("换成H20呢", first.session_id)
    card = r.serving_plan
    assert card is not None and card["inference"]["gpu"] == "H20" and card["inference"]["starts"] is True
    assert {c["gpu"] for c in card["plan"]["candidates"]} == {"H20"}  # the rent options of the pinned GPU
    stored = assistant.session_messages(first.session_id)
    assert [m.serving_plan is not None for m in stored if m.role == "assistant"] == [True, True]
    assert stored[-1].serving_plan == card


def test_the_prose_check_knows_yuan_per_million_tokens(assistant: Assistant) -> None:
    # regression: every serving answer was flagged "yuan ¥8.92" (its ¥ per million output tokens), a key the
    # prose check did not read as money; the page showed the flag in English under a Chinese answer
    r = assistant.ask("上线一个Qwen2.5-14B的对话服务要几张卡，并发20")
    assert r.serving is not None and f"¥{r.serving['cny_per_million_tokens']:.2f}" in r.answer_markdown
    assert r.prose_check == []


def test_a_training_answer_has_no_serving_card(assistant: Assistant) -> None:
    r = assistant.ask("用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000")
    assert r.serving_plan is None and r.recommendation is not None


def test_int4_on_one_a10_carries_the_inference_and_its_assumptions(assistant: Assistant) -> None:
    r = assistant.ask("单卡A10能开多少并发 跑qwen2.5-7b int4")
    card = r.serving_plan
    assert card is not None and card["inference"] is not None
    assert card["inference"]["gpu"] == "A10" and card["inference"]["weights"] == "int4"
    assert card["inference"]["assumptions_zh"] and card["inference"]["assumptions"]
