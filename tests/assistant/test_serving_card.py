"""A serving answer carries what its card draws in `answer` (kind serving): the engine's plan per cloud, the
pinned GPU's inference, the same figures as the answer's headline (`figures()`), stored with the turn and read
back when the session is reopened."""

from __future__ import annotations

import pytest

from service.assistant import compact
from service.assistant.service import Assistant
from service.assistant.types import AskResult
from service.questions.serving import ServingAnswer
from service.settings import Settings
from tests.answers import plan_of
from tests.assistant.test_agent import FakeRetriever


@pytest.fixture(scope="module")
def assistant(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    return Assistant(Settings(data_dir=tmp_path_factory.mktemp("serving-card"), llm="offline", DATABASE_URL=""),
                     retriever_factory=FakeRetriever)


def served(r: AskResult) -> ServingAnswer:
    assert r.intent == "serving" and isinstance(r.answer, ServingAnswer), r.answer_markdown
    return r.answer


def test_a_serving_answer_carries_the_engines_plan_and_figures(assistant: Assistant) -> None:
    answer = served(assistant.ask("上线一个Qwen2.5-72B的对话服务要几张卡，并发50"))
    plan, figures = answer.plan, answer.figures()
    assert answer.inference is None and plan is not None  # no GPU named: the plan alone
    for cloud, pick in plan.picks.items():
        assert [c.instance_type for c in plan.candidates if c.cloud == cloud][0] == pick
    top = plan.candidates[0]
    assert figures.instance is not None and top.instance_type == figures.instance.instance_type
    assert top.sizing.gpus_per_replica == figures.gpus_per_replica
    assert top.cny_per_million_output_tokens == figures.cny_per_million_tokens
    assert top.launch.vllm.startswith("vllm serve ") and top.launch.sglang


def test_a_pinned_gpu_carries_its_inference_and_survives_a_reload(assistant: Assistant) -> None:
    first = assistant.ask("上线一个Qwen2.5-72B的对话服务要几张卡，并发50")
    r = assistant.ask("换成H20呢", first.session_id)
    answer = served(r)
    assert answer.inference is not None and answer.inference.gpu == "H20" and answer.inference.starts is True
    assert answer.plan is not None and {c.gpu for c in answer.plan.candidates} == {"H20"}  # the pinned GPU's
    stored = assistant.session_messages(first.session_id)
    assert [(m.answer or {}).get("kind") for m in stored if m.role == "assistant"] == ["serving", "serving"]
    assert stored[-1].answer == compact.answer(r.model_dump(mode="json")["answer"])  # as stored: 3 options a cloud


def test_the_prose_check_knows_yuan_per_million_tokens(assistant: Assistant) -> None:
    # regression: every serving answer was flagged "yuan ¥8.92" (its ¥ per million output tokens), a key the
    # prose check did not read as money; the page showed the flag in English under a Chinese answer
    r = assistant.ask("上线一个Qwen2.5-14B的对话服务要几张卡，并发20")
    cpm = served(r).figures().cny_per_million_tokens
    assert cpm is not None and f"¥{cpm:.2f}" in r.answer_markdown
    assert r.prose_check == []


def test_a_training_answer_is_a_plan_not_a_serving_answer(assistant: Assistant) -> None:
    r = assistant.ask("用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000")
    assert r.answer is not None and r.answer.public()["kind"] == "plan" and plan_of(r) is not None


def test_int4_on_one_a10_carries_the_inference_and_its_assumptions(assistant: Assistant) -> None:
    answer = served(assistant.ask("单卡A10能开多少并发 跑qwen2.5-7b int4"))
    inf = answer.inference
    assert inf is not None and inf.gpu == "A10" and inf.weights == "int4"
    assert inf.assumptions_zh and inf.assumptions
