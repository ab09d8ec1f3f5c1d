"""How many GPUs, serving verdicts and savings answered from the frame as an LLM reader writes it (issue 36): the
first line answers what was asked, with the engine's figures. Over the mini catalog (tests/fixtures/mini_knowledge:
round synthetic prices)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from service.assistant.prompts import phrases
from service.catalog.loader import Catalog
from service.questions.base import Context, Phrases
from service.questions.feasibility import FeasibilityAnswer
from service.questions.min_gpus import MinGpusAnswer
from service.questions.registry import decide
from service.questions.serving import ServingAnswer
from service.questions.turn import Conversation, Names, Turn, _answer
from service.reader.figures import drop_unstated
from service.reader.from_frame import Names as DraftNames
from service.reader.from_frame import reading_from_draft
from service.reader.llm_schema import FrameDraft

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ask_frame(mini: Catalog, names: Names) -> Callable[..., Turn]:
    """ask_frame(text, draft) -> the turn answering the frame `draft` as the LLM reader hands it over (figures the
    text does not state dropped)."""
    ctx = Context.of(mini, max_price_age_days=100_000)
    draft_names = DraftNames(names.reader.model_aliases, names.reader.gpu_aliases)

    def phrases_of(lang: str) -> Phrases:
        return phrases(ROOT / "prompts", lang)

    def run(text: str, draft: dict[str, Any]) -> Turn:
        stated, _ = drop_unstated(FrameDraft.model_validate(draft), [text])
        reading = reading_from_draft(stated, text, draft_names, decide)
        return _answer(ctx, names, phrases_of, text, Conversation(), None, reading)

    return run


def _first(turn: Turn) -> str:
    return next(ln for ln in turn.text.splitlines() if ln.strip() and not ln.startswith(">"))


TWO_ON_DEMAND = {"asked": "savings", "compared": "billing", "names": ["PNV4.7XLARGE116"], "asked_setup": 1,
                 "constraints": {"billing": "monthly"},
                 "setups": [{"role": "baseline", "hardware": {"nodes": 2, "instance": "PNV4.7XLARGE116"}},
                            {"role": "alternative", "hardware": {"nodes": 2, "instance": "PNV4.7XLARGE116"}}]}


@pytest.mark.parametrize(("lang", "text", "opening"), [
    ("en", "We run two PNV4.7XLARGE116 around the clock on demand. Switching both to monthly saves how much?",
     "Monthly billing saves about **¥5,000 a month**"),
    ("zh", "两台 PNV4.7XLARGE116 按量 24 小时不停，改包月一个月能省多少", "改包月每月约省 **¥5,000**"),
])
def test_a_billing_saving_with_no_job_is_a_saving_of_the_instances_prices(ask_frame: Callable[..., Turn], lang: str,
                                                                          text: str, opening: str) -> None:
    # 2 x (¥10/h x 730 h) on demand = ¥14,600 against 2 x ¥4,800 monthly: ¥5,000 a month saved
    turn = ask_frame(text, TWO_ON_DEMAND)
    assert turn.type == "savings"
    assert _first(turn).startswith(opening)
    assert turn.answer is not None and turn.answer.facts()["cny_per_month"] == pytest.approx(5000)


def test_a_saving_of_a_job_still_sizes_the_job(ask_frame: Callable[..., Turn]) -> None:
    turn = ask_frame("Qwen2.5-7B LoRA 100k samples: full fine-tune instead of LoRA costs how much more?",
                     {"task": "train", "asked": "savings", "compared": "method",
                      "data": {"samples": 100000},
                      "setups": [{"role": "baseline", "models": [{"name": "Qwen2.5-7B"}], "method": "lora"},
                                 {"role": "alternative", "models": [{"name": "Qwen2.5-7B"}], "method": "full"}],
                      "asked_setup": 1})
    assert turn.type == "savings"
    answer = turn.answer
    assert answer is not None and getattr(answer, "billing", "absent") is None
    assert getattr(answer, "before", None) is not None


@pytest.mark.parametrize(("text", "weights", "opening", "starts"), [
    ("Qwen2.5-7B 用 int4 在我的 A10 上能起来吗", "int4", "能起来。1 张", True),
    ("Qwen2.5-14B 在我的 A10 上能起来吗，不想量化", "bf16", "起不来", False),
])
def test_can_a_card_run_it_is_a_verdict_on_one_card(ask_frame: Callable[..., Turn], text: str, weights: str,
                                                      opening: str, starts: bool) -> None:
    # the reader's count '1' is dropped (the text does not say it): 'my A10' is one card, and the first line is
    # whether it runs there, not how many cards a deployment would take
    model = "Qwen2.5-7B" if "7B" in text else "Qwen2.5-14B"
    turn = ask_frame(text, {"task": "serve", "asked": "fits",
                            "setups": [{"models": [{"name": model}], "knobs": {"weights": weights},
                                        "hardware": {"gpu": "A10", "gpu_count": 1}}]})
    assert turn.type == "serving"
    assert _first(turn).startswith(opening)
    inf = getattr(turn.answer, "inference", None)
    assert inf is not None and inf.gpus == 1 and inf.starts is starts


def test_a_load_a_card_does_not_hold_answers_enough_first(ask_frame: Callable[..., Turn]) -> None:
    turn = ask_frame("Qwen2.5-14B 单卡 A10，输入 6k 输出 400，200 并发够不够",
                     {"task": "serve", "asked": "fits", "load": {"concurrency": 200, "input_tokens": 6144,
                                                                 "output_tokens": 400},
                      "setups": [{"models": [{"name": "Qwen2.5-14B"}], "knobs": {"weights": "int4"},
                                  "hardware": {"gpu": "A10", "gpu_count": 1}}]})
    first = _first(turn)
    assert first.startswith("不够，扛不住 200 并发")
    # the concurrency figure is the one at the stated lengths (the line's), not at the full context
    held = re.search(r"只放得下约 ([\d,]+) 个", first)
    assert held is not None and turn.answer is not None
    assert turn.answer.facts()["concurrency"] == pytest.approx(float(held.group(1).replace(",", "")), abs=0.5)


def test_a_spot_saving_on_a_named_instance_is_its_spot_price_even_with_a_job(ask_frame: Callable[..., Turn]) -> None:
    # the job runs on the instance named whatever it is: the saving is that instance's spot price against on demand
    # (mini catalog: ¥10/h on demand, ¥5/h spot), not two plans that pick different instances
    turn = ask_frame("Our Qwen2.5-7B LoRA sweep runs on PNV4.7XLARGE116 on demand. Spot would save what?",
                     {"task": "train", "asked": "savings", "compared": "billing", "names": ["PNV4.7XLARGE116"],
                      "asked_setup": 1, "constraints": {"billing": "spot"},
                      "setups": [{"role": "baseline", "models": [{"name": "Qwen2.5-7B"}], "method": "lora",
                                  "hardware": {"instance": "PNV4.7XLARGE116"}},
                                 {"role": "alternative", "models": [{"name": "Qwen2.5-7B"}], "method": "lora",
                                  "hardware": {"instance": "PNV4.7XLARGE116"}}]})
    assert turn.type == "savings"
    assert turn.answer is not None and turn.answer.facts()["cny_per_hour"] == pytest.approx(5.0)
    first = _first(turn)
    assert first.startswith("Spot would save about **¥5.00 an hour** (50% off)") and "PNV4.7XLARGE116" in first
    assert "an estimate" in first  # the mini catalog's spot price is marked an estimate


def test_nodes_of_cards_are_their_product_when_no_total_is_said(ask_frame: Callable[..., Turn]) -> None:
    # '2 台 H800*8': the reader's total 16 is not in the text (dropped), the nodes and cards per node are
    turn = ask_frame("2 台 H800*8 部署 Qwen2.5-72B 能起来吗",
                     {"task": "serve", "asked": "fits",
                      "setups": [{"models": [{"name": "Qwen2.5-72B"}],
                                  "hardware": {"gpu": "H800", "gpu_count": 16, "nodes": 2, "gpus_per_node": 8}}]})
    inf = getattr(turn.answer, "inference", None)
    assert inf is not None and inf.gpus * inf.replicas == 16
    assert "16" in _first(turn)


def test_a_card_that_cannot_hold_it_counts_the_cards_it_takes(ask_frame: Callable[..., Turn]) -> None:
    # 'is my A10 enough for Qwen2.5-14B' (BF16, ~28 GiB): no; the count the answer gives is the cards it takes
    turn = ask_frame("Qwen2.5-14B 在我的 A10 上能起来吗，不想量化",
                     {"task": "serve", "asked": "fits",
                      "setups": [{"models": [{"name": "Qwen2.5-14B"}], "knobs": {"weights": "bf16"},
                                  "hardware": {"gpu": "A10", "gpu_count": 1}}]})
    assert turn.answer is not None
    count = turn.answer.facts()["count"]
    assert count == 2 and f"{count:g} 张卡" in _first(turn)


def test_the_longest_context_a_server_holds_carries_the_weights_it_loads(ask_frame: Callable[..., Turn]) -> None:
    # 'how long a context on 2x A10 for Qwen2.5-7B': the weights on all the cards are a figure of the answer, as the
    # line says them per card
    turn = ask_frame("Qwen2.5-7B 用 vLLM 部署在 2 张 A10 上，max-model-len 最长能开多少",
                     {"task": "serve", "asked": "capacity", "target": "context",
                      "setups": [{"models": [{"name": "Qwen2.5-7B"}], "hardware": {"gpu": "A10", "gpu_count": 2}}]})
    assert turn.type == "capacity"
    a = turn.answer
    per_gpu = getattr(a, "weights_gib_per_gpu", None)
    assert a is not None and per_gpu is not None
    assert a.facts()["weights_gib"] == pytest.approx(2 * per_gpu)


def test_a_spot_saving_in_chinese_is_all_chinese(ask_frame: Callable[..., Turn]) -> None:
    turn = ask_frame("我们在 PNV4.7XLARGE116 上按量跑 Qwen2.5-7B LoRA，改竞价实例能省多少",
                     {"task": "train", "asked": "savings", "compared": "billing", "names": ["PNV4.7XLARGE116"],
                      "asked_setup": 1, "constraints": {"billing": "spot"},
                      "setups": [{"role": "baseline", "models": [{"name": "Qwen2.5-7B"}], "method": "lora",
                                  "hardware": {"instance": "PNV4.7XLARGE116"}},
                                 {"role": "alternative", "models": [{"name": "Qwen2.5-7B"}], "method": "lora",
                                  "hardware": {"instance": "PNV4.7XLARGE116"}}]})
    first = _first(turn)
    assert first.startswith("改竞价实例每小时约省 **¥5.00**（便宜约 50%）") and "这是估算" in first
    assert not re.search(r"[A-Za-z]{4,}", first.replace("PNV4.7XLARGE116", ""))


def _count_frame(deadline_h: float) -> dict[str, Any]:
    return {"task": "train", "asked": "count", "data": {"tokens": 2e9}, "constraints": {"deadline_hours": deadline_h},
            "setups": [{"models": [{"name": "Qwen2.5-7B"}], "method": "lora", "hardware": {"gpu": "A10"}}]}


def test_a_count_with_a_deadline_is_the_count_that_meets_it(ask_frame: Callable[..., Turn]) -> None:
    # memory alone: a few A10s; 2B tokens in 48 h takes more: the count asked is the one that finishes in time
    turn = ask_frame("Qwen2.5-7B LoRA 2B tokens 48 小时内训完最少几张 A10", _count_frame(48))
    a = turn.answer
    assert turn.type == "min_gpus" and isinstance(a, MinGpusAnswer)
    n, mem = a.gpus_needed, a.memory_gpus
    assert n is not None and mem is not None and n > mem
    assert a.memory_hours is not None and a.training_hours is not None and a.memory_hours > 48 >= a.training_hours
    assert _first(turn).startswith(f"要在 48 小时内训完，至少需要 {n} 张")
    assert a.facts()["count"] == n


def test_a_deadline_no_count_meets_says_so(ask_frame: Callable[..., Turn]) -> None:
    turn = ask_frame("Qwen2.5-7B LoRA 2B tokens 1 小时内训完最少几张 A10", _count_frame(1))
    a = turn.answer
    assert isinstance(a, MinGpusAnswer) and a.deadline_met is False
    assert _first(turn).startswith("1 小时内训不完")


@pytest.mark.parametrize(("text", "machine"), [
    ("上线 Qwen2.5-72B 对话服务要几张 L20", "即 1 台腾讯云 PNV5b.64XLARGE768（8 卡）。"),
    ("How many L20s to serve Qwen2.5-72B?", "That is one Tencent Cloud PNV5b.64XLARGE768 machine (8 cards)."),
])
def test_a_serving_count_says_the_machines_it_is_on(ask_frame: Callable[..., Turn], text: str, machine: str) -> None:
    # '几台机器' is answered with the count: the mini catalog rents L20s only as one 8-card machine
    turn = ask_frame(text, {"task": "serve", "asked": "count",
                            "setups": [{"models": [{"name": "Qwen2.5-72B"}], "hardware": {"gpu": "L20"}}]})
    first = _first(turn)
    assert first.endswith(machine)
    assert first.startswith(("需要", "You need"))


def test_ollama_with_no_quantization_said_is_sized_as_its_4_bit_default(ask_frame: Callable[..., Turn]) -> None:
    # 'I have 8 RTX 4090s, can Ollama run a 70B?': Ollama pulls q4_K_M unless a tag says otherwise, not BF16
    turn = ask_frame("用 ollama 在 A10 上跑 Qwen2.5-14B 能起来吗",
                     {"task": "serve", "asked": "fits",
                      "setups": [{"models": [{"name": "Qwen2.5-14B"}], "knobs": {"engine": "ollama"},
                                  "hardware": {"gpu": "A10"}}]})
    inf = getattr(turn.answer, "inference", None)
    assert inf is not None and inf.weights == "int4" and inf.starts
    assert "q4_K_M" in turn.text and _first(turn).startswith("能起来")
    said_q8 = ask_frame("用 ollama 在 A10 上跑 Qwen2.5-7B q8 能起来吗",
                        {"task": "serve", "asked": "fits",
                         "setups": [{"models": [{"name": "Qwen2.5-7B"}], "knobs": {"engine": "ollama", "weights": "int8"},
                                     "hardware": {"gpu": "A10"}}]})
    assert isinstance(said_q8.answer, ServingAnswer) and said_q8.answer.inference is not None
    assert said_q8.answer.inference.weights == "int8" and "q4_K_M" not in said_q8.text


@pytest.mark.parametrize(("text", "alt"), [("qwen2-72b lora 16k 最少几张4090", "H800 SXM 至少 16 张"),
                                           ("Qwen2-7B lora 128k context, how many 4090s at least", None)])
def test_no_count_that_fits_says_what_stays_on_every_card_and_what_does_fit(ask: Callable[..., Turn], text: str,
                                                                            alt: str | None) -> None:
    # Regression: '64 张 RTX 4090 也放不下 …：单卡需要 85.93 GiB' said neither why more cards do not help (the
    # activations are not sharded) nor what would run it
    t = ask(text)
    lines = t.text.splitlines()
    assert t.type == "min_gpus" and "64" in lines[0] and ("激活" in lines[0] or "activations" in lines[0])
    assert "ZeRO-3" in lines[0] and ("显存账" in lines[1] or "Memory per GPU" in lines[1])
    assert "Ulysses" in lines[2] and "Liger" in lines[2]
    assert (alt in lines[2]) if alt else ("larger card" not in lines[2] and "更大显存" not in lines[2])
    assert t.answer is not None and "count" not in t.answer.facts()  # no count of the named card is claimed


@pytest.mark.parametrize(("text", "machines"), [("Qwen2-72B 全参微调最少几张H800", "台 8 卡机器"),
                                               ("how many H800s at least for Qwen2-72B full fine-tuning", "machines of 8")])
def test_a_count_beyond_one_server_says_its_machines(ask: Callable[..., Turn], text: str, machines: str) -> None:
    # '要几机几卡': a count above 8 is whole 8-card servers, and the first line says how many
    t = ask(text)
    assert t.answer is not None
    n = int(t.answer.facts()["count"])
    first = t.text.splitlines()[0]
    assert n > 8 and f"{n // 8} {machines}" in first.replace("（", " ").replace("(", " ")
    small = ask("Qwen2-7B lora 最少几张A10")
    assert "机器" not in small.text.splitlines()[0]


@pytest.mark.parametrize(("draft", "applied"), [
    # a server's post asking how a setting works: the guide answers it, never a LoRA verdict on the named card
    ({"task": "serve", "asked": "howto", "setups": [
        {"models": [{"name": "Qwen2-7B"}], "hardware": {"gpu": "L20", "gpu_count": 8}, "knobs": {"engine": "ollama"}}]},
     False),
    # a training job named beside the question is still sized for it
    ({"task": "train", "asked": "howto", "setups": [
        {"models": [{"name": "Qwen2-7B"}], "method": "lora", "hardware": {"gpu": "A10", "gpu_count": 1}}]}, True),
])
def test_a_knowledge_answer_sizes_only_a_training_job(ask_frame: Callable[..., Turn], draft: dict[str, object],
                                                      applied: bool) -> None:
    turn = ask_frame("How does OLLAMA_NUM_PARALLEL work on my eight L20 for qwen2 7b?" if not applied
                     else "DeepSpeed or FSDP for a qwen2 7b lora on one A10?", draft)
    assert turn.type == "knowledge" and turn.answer is not None
    assert (getattr(turn.answer, "applied", None) is not None) is applied
    assert ("For your job" in turn.text) is applied and ("LoRA" in turn.text.split("###")[0]) is applied


@pytest.mark.parametrize(("text", "first", "second"), [
    ("A100 上用 fp8 训 qwen2 7b lora 放得下吗", "不能用 FP8 训练：A100", "能。"),
    ("can I fine-tune qwen2 7b with lora in fp8 on one A10?", "Not in FP8: the A10", "Yes."),
])
def test_fp8_training_on_a_card_without_it_says_so_first(ask: Callable[..., Turn], text: str, first: str,
                                                          second: str) -> None:
    turn = ask(text)
    lines = turn.text.splitlines()
    assert turn.type == "feasibility" and isinstance(turn.answer, FeasibilityAnswer) and turn.answer.fp8_unsupported
    assert lines[0].startswith(first) and lines[1].startswith(second)
    assert "AMP-BF16" in turn.text or "BF16" in lines[0]  # sized in the precision it can run


@pytest.mark.parametrize("text", [
    "A100 上用 fp8 训 qwen2 7b lora 最少几张",
    "A10 和 L20 用 fp8 训 qwen2 7b lora 哪个划算",
])
def test_fp8_training_on_named_cards_without_it_is_answered_in_bf16_and_said(ask: Callable[..., Turn],
                                                                            text: str) -> None:
    turn = ask(text)
    assert turn.error is None and turn.answer is not None, turn.text
    assert "不能用 FP8 训练：" in turn.text and "按 BF16 混合精度计算" in turn.text
    assert "has no FP8" not in turn.text and not turn.text.startswith("> ")  # Chinese, after the first line


@pytest.mark.parametrize(("text", "first", "machines"), [
    ("8张L20部署qwen2 72b能起来吗", "能起来。8 张", "即 1 台腾讯云 PNV5b.64XLARGE768（8 卡）。"),
    ("Would one machine with 8 L20 be enough to serve qwen2 72b?", "Yes, it starts. 8x",
     " That is one Tencent Cloud PNV5b.64XLARGE768 machine (8 cards)."),
])
def test_a_serving_verdict_on_several_cards_says_the_machines_a_cloud_rents(
        ask: Callable[..., Turn], text: str, first: str, machines: str) -> None:
    """'One machine or two?': the machines come from the instance a cloud rents the cards in (the synthetic catalog
    has an 8-card L20 machine; the real one's L20 machines hold 4, and then nothing claims one 8-card machine)."""
    turn = ask(text)
    line = _first(turn)
    assert turn.type == "serving" and line.startswith(first) and line.endswith(machines), line


def test_fp8_on_a_card_without_it_stays_an_error_for_a_structured_call(mini: Catalog) -> None:
    """The chat answers in BF16 and says so; a structured call (MCP, API) keeps the error naming the precision."""
    from service.errors import InvalidInputError
    from service.questions.feasibility import MODULE as FEASIBILITY
    from service.questions.feasibility import FeasibilityArgs

    ctx = Context.of(mini, max_price_age_days=100_000)
    args = {"model": "Qwen2-7B", "method": "lora", "gpu": "A100", "precision": "fp8"}
    with pytest.raises(InvalidInputError, match="precision fp8"):
        FEASIBILITY.call(ctx, FeasibilityArgs.model_validate(args))
    answer = FEASIBILITY.call(ctx, FeasibilityArgs.model_validate({**args, "fp8_as_bf16": True}))
    assert isinstance(answer, FeasibilityAnswer) and answer.fp8_unsupported and answer.fits


def test_a_knowledge_answer_sizes_fp8_training_in_bf16_after_its_fact(ask: Callable[..., Turn]) -> None:
    turn = ask("A100 支持 FP8 吗？想用 fp8 训 qwen2 7b lora")
    applied = next(line for line in turn.text.splitlines() if line.startswith("对你的任务："))
    assert turn.type == "knowledge" and applied.startswith("对你的任务：能。") and "不能用 FP8" not in applied


def test_a_concurrency_with_no_lengths_given_says_the_lengths_it_was_sized_at(ask_frame: Callable[..., Turn]) -> None:
    """'最多能同时跑多少个请求' without lengths: the count is for the engine's default request, and the line says which
    one, never 'input 0 / output 0 tokens'."""
    line = _first(ask_frame("一张A10部署qwen2 7b，最多能同时跑多少个请求", {
        "task": "serve", "asked": "concurrency",
        "setups": [{"models": [{"name": "Qwen2-7B"}], "hardware": {"gpu": "A10", "gpu_count": 1}}]}))
    assert "输入 0 /" not in line and "输入 1024 / 输出 256 tokens" in line, line
