"""The reader's question type and subject: a GPU named in any phrasing as the subject (with its count), several
as a comparison, savings with a before and an after, and follow-ups that leave the intent to the previous turn."""

from __future__ import annotations

import pytest

from service.reader import ParsedMessage, parse_message
from tests.reader.test_reader import GPUS, MODELS

GPUS_MORE = {**GPUS, "3090": "RTX-3090", "l20": "L20", "h20": "H20", "l40s": "L40S"}


def parse(text: str) -> ParsedMessage:
    return parse_message(text, MODELS, GPUS_MORE)


@pytest.mark.parametrize(("text", "intent", "gpus", "count"), [
    ("4090能跑qwen2 7b lora吗", "feasibility", ("RTX-4090",), 1),  # issue: the 4090 was never mentioned
    ("单卡A100 80G够不够", "feasibility", ("A100-80G-SXM",), 1),  # issue: '单卡 ... 够不够'
    ("两张4090跑得动qwen2 7b不", "feasibility", ("RTX-4090",), 2),  # Chinese count word, trailing 不
    ("is 2x 3090 enough for qwen2 7b", "feasibility", ("RTX-3090",), 2),
    ("qwen2-7b lora on a single L20 48G?", "feasibility", ("L20",), 1),  # issue: 'on a single L20 48G'
    ("can I do it on a pair of A10s", "feasibility", ("A10",), 2),  # 'a pair of'
    ("需要几张a100", "min_gpus", ("A100-40G-SXM",), None),  # issue
    ("min number of 4090s for llama 3 70b", "min_gpus", ("RTX-4090",), None),  # issue
    ("mixtral qlora最少要多大显存", "min_gpus", (), None),  # least memory, no GPU
    ("A100 vs H800 for qwen2 7b", "compare", ("A100-40G-SXM", "H800-SXM"), None),
    ("14b lora用A10还是L20 哪个便宜", "compare", ("A10", "L20"), None),
    ("改成lora的话能省多少", "savings", (), None),  # issue
    ("use spot instances to save money", None, (), None),  # an objective, not a question about a saving
    ("那京东云呢", None, (), None),  # a follow-up: the previous turn's intent applies
    ("8张A100全参微调qwen2 7b", None, ("A100-40G-SXM",), 8),  # a statement: a plan constraint, not a question
])
def test_question_type_and_subject(text: str, intent: str | None, gpus: tuple[str, ...], count: int | None) -> None:
    s = parse(text).subject
    assert s.intent == intent
    if intent == "compare":
        assert s.options == gpus
    else:
        assert s.gpus == gpus
        assert s.gpu_count == count


def test_the_subject_gpu_is_not_a_plan_filter() -> None:
    p = parse("4090能跑qwen2 7b lora吗")
    assert "gpu_include" not in p.slots and "gpu_count" not in p.slots
    plan = parse("8张A100全参微调qwen2 7b")  # a constraint stays one
    assert plan.slots["gpu_include"] == ["A100-40G-SXM"] and plan.slots["gpu_count"] == 8


@pytest.mark.parametrize(("text", "before", "after"), [
    ("72B的lora改成全参要贵多少", "lora", "full"),  # pre-stop question: from LoRA to full
    ("how much more does a full finetune of 72B cost vs lora", "lora", "full"),  # 'vs lora' is the base
    ("switching from full fine-tune to LoRA, how much does that save", "full", "lora"),
])
def test_savings_in_one_message_has_a_before_and_an_after(text: str, before: str, after: str) -> None:
    p = parse(text)
    assert p.subject.intent == "savings"
    assert p.subject.before == {"method": before}
    assert p.slots["method"] == after


@pytest.mark.parametrize(("text", "kind", "options"), [
    ("腾讯云和京东云哪个便宜 qwen2 7b", "cloud", ("tencent", "jdcloud")),
    ("qwen2 7b lora和qlora哪个更省钱", "method", ("lora", "qlora")),
    ("spot vs on-demand for qwen2 7b, which costs less", "billing", ("spot", "on_demand")),
])
def test_comparisons_of_clouds_methods_and_billing(text: str, kind: str, options: tuple[str, ...]) -> None:
    p = parse(text)
    assert (p.subject.intent, p.subject.compare_kind, p.subject.options) == ("compare", kind, options)


@pytest.mark.parametrize(("text", "intent", "before", "after"), [
    ("V100换成A100能快多少", "savings", {"gpu_include": ["V100-32G-SXM2"]}, {"gpu_include": ["A100-40G-SXM"]}),
    ("how much do i save if i go monthly instead of pay as you go", "savings", {"billing": "on_demand"},
     {"billing": "monthly"}),  # 'instead of' names the base
])
def test_changes_named_in_one_message(text: str, intent: str, before: dict[str, object],
                                      after: dict[str, object]) -> None:
    s = parse(text).subject
    assert (s.intent, s.before, s.after) == (intent, before, after)


@pytest.mark.parametrize(("text", "intent", "gpus"), [
    ("24G显存能微调qwen2 7b吗", "feasibility", ("24G",)),  # a memory size as the GPU asked about
    ("What GPU do I need for qwen2 7b QLoRA?", "min_gpus", ()),
    ("A100和H800有区别吗", "compare", ("A100-40G-SXM", "H800-SXM")),
])
def test_more_question_phrasings(text: str, intent: str, gpus: tuple[str, ...]) -> None:
    s = parse(text).subject
    assert s.intent == intent
    assert (s.options if intent == "compare" else s.gpus) == gpus
