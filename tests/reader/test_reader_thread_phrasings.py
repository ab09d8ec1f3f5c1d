"""Phrasings from real threads the reader misread (working split of evals/questions), each row names the miss."""

from __future__ import annotations

from functools import cache

import pytest

from service.catalog.loader import load_catalog
from service.catalog.queries import gpu_index, model_index
from service.questions.registry import decide as question_type
from service.reader import parse_message
from service.reader.observe import find_observation
from service.reader.read import Reader
from service.settings import REPO_ROOT


@cache
def _names() -> tuple[dict[str, str], dict[str, str]]:
    """The shipped catalog's model and GPU names."""
    cat = load_catalog(REPO_ROOT / "knowledge")
    return ({k: m.id for k, m in model_index(cat.models).items()},
            {k: g.id for k, (g, _) in gpu_index(cat.gpus).items()})


def parse(text: str) -> dict[str, object]:
    return parse_message(text, *_names()).slots


@pytest.mark.parametrize(("text", "model"), [
    ("how many gpus needs when full training 70B  Llama2", "Llama-2-70B"),  # was the sizeless 'Llama2'
    ("How many A100 GPUs (40GB) required to tune 13B model? I want to train llama2", "Llama-2-13B"),
    ("VRAM needed for LORA fine tuning the 7B LLAVA model?", "LLAVA-7B"),  # unknown family: sized by its size
])
def test_a_family_and_a_size_said_apart_name_one_model(text: str, model: str) -> None:
    got = parse(text)
    assert got.get("model") == model and "params_b" not in got


def test_a_packaging_suffix_is_not_part_of_an_unknown_name() -> None:
    assert parse("python finetune.py --base_model='decapoda-research/llama-7b-hf'").get("model") == "llama-7b"


@pytest.mark.parametrize(("text", "method"), [
    ("13B model ( full parameter )? I want to train llama2 for a new language, so lora is not the best option",
     "full"),  # was lora: a method negated after it is named
    ("qwen2 7b lora 效果不好 想试试全参", "full"),
    ("qwen2 7b 用lora", "lora"),
])
def test_a_method_negated_after_its_name_is_not_chosen(text: str, method: str) -> None:
    assert parse(text).get("method") == method


@pytest.mark.parametrize("text", [
    "failed (exitcode: -9) local_rank: 0, qwen2 7b 全参",  # a process's exit code
    "- 2x Nvidia 3090 cards (total 48Gb)\n- 1x Nvidia 4090",  # a list bullet
])
def test_exit_codes_and_bullets_are_not_negative_figures(text: str) -> None:
    notes = parse_message(text, *_names()).unparsed_notes
    assert not any("negative" in n or "负数" in n for n in notes), notes


def test_a_negative_budget_is_still_refused() -> None:
    notes = parse_message("qwen2 7b lora 预算-3000", *_names()).unparsed_notes
    assert any("负数" in n for n in notes)


@pytest.mark.parametrize(("text", "kind", "figures"), [
    ("qwen2vl-72B全参微调时4张A800会从每张30多G的显存占用突然升到80G后报错", "oom", {"memory_gb": 80.0}),
    ("tokens/s per gpu dropped from 3500 to 1200 after turning on grad checkpointing", "slow", {"tokens_per_s": 1200}),
    ("One RTX 3090, 88 hours, is this normal? --num_epochs=10", "hours", {"hours": 88.0, "whole_run": True}),
    ("训一个epoch要20小时正常吗", "hours", {"hours": 20.0, "whole_run": False}),
    ("跑了30小时还没完，每个epoch都这么慢正常吗", "hours", {"hours": 30.0, "whole_run": False}),
])
def test_observations(text: str, kind: str, figures: dict[str, float]) -> None:
    got, _ = find_observation(text)
    assert got is not None and got.kind == kind
    assert {k: getattr(got, k) for k in figures} == figures


def test_training_flags_give_the_epochs() -> None:
    assert parse("qwen2 7b lora --num_epochs=10 --cutoff_len=512").get("epochs") == 10


@pytest.mark.parametrize(("text", "count"), [
    ("4090能跑qwen2 7b lora吗", 1),  # one card named: the fit is checked on one
    ("2张4090能跑qwen2 14b lora吗", 2),
])
def test_a_gpu_named_without_a_count_is_one_card_for_a_fit(text: str, count: int) -> None:
    r = Reader(*_names(), question_type).read(text)
    assert r.type == "feasibility" and r.slots.get("gpu_count") == count
    assert "gpu_count" not in r.own_slots or r.own_slots["gpu_count"] == count  # what the message states


def test_how_long_in_time_is_not_a_context_question() -> None:
    r = Reader(*_names(), question_type).read("30B LORA微调，全流程训练大概需要多长时？拿两张A100训练")
    assert r.slots.get("target") is None and r.type != "capacity"


@pytest.mark.parametrize(("text", "seen"), [
    ("一张4090 单卡部署qwen2-7b模型占用了20g显存，两张卡每张都会各占20g", 20.0),  # was read as a 20 GB card
    ("vllm serve Qwen2.5-3B-Instruct-AWQ on a 3090, nvidia-smi says it takes 16G of VRAM", 16.0),
])
def test_memory_in_use_is_an_observation_not_the_cards_size(text: str, seen: float) -> None:
    got = parse_message(text, *_names())
    assert got.slots.get("gpu_memory_gb") is None and got.extra.get("gpu_memory_gb") is None
    assert got.extra.get("observed") == {"kind": "memory", "memory_gb": seen}


def test_a_cards_size_is_still_the_cards() -> None:
    assert parse_message("单卡4090 24G 跑qwen 7b lora够吗", *_names()).extra.get("gpu_memory_gb") == 24.0


@pytest.mark.parametrize("text", [
    "Naively, fine-tuning a 7B model requires about 7 x 4 x 4 = 112 GB of VRAM",  # was a 112 GB dataset
    "qwen2 7b lora on a 24GB GPU",
])
def test_gigabytes_of_gpu_memory_are_not_data(text: str) -> None:
    assert "dataset_gb" not in parse(text)


def test_gigabytes_of_data_are_still_data() -> None:
    assert parse("qwen2 7b lora 数据500GB").get("dataset_gb") == 500.0


@pytest.mark.parametrize(("text", "model"), [
    ("mixtral 8x22b 部署要几张H20", "Mixtral-8x22B"),  # was the family alias: Mixtral-8x7B, a third of the size
    ("mixtral 8x7b lora", "Mixtral-8x7B"),
])
def test_a_mixtral_size_names_its_own_model(text: str, model: str) -> None:
    assert parse(text).get("model") == model


@pytest.mark.parametrize(("text", "model"), [
    ("DeepSeek-R1 蒸馏版 7b 部署要几张4090", "DeepSeek-R1-Distill-Qwen-7B"),  # was the 671B R1
    ("ds r1 蒸馏 32b 部署", "DeepSeek-R1-Distill-Qwen-32B"),
    ("deepseek-r1-distill-llama-70b", "DeepSeek-R1-Distill-Llama-70B"),
    ("满血r1 部署", "DeepSeek-R1"),
])
def test_r1_distills_are_not_r1(text: str, model: str) -> None:
    assert parse(text).get("model") == model


@pytest.mark.parametrize(("text", "gpu"), [
    ("3090ti跑qwen2 7b lora够吗", "RTX-3090TI"),  # was dropped: 'which card?'
    ("4070ti super 16g 能跑qwen2 7b qlora吗", "RTX-4070TI-SUPER"),
    ("3090 24G 跑qwen2 7b lora够吗", "RTX-3090"),
])
def test_consumer_card_variants_resolve(text: str, gpu: str) -> None:
    assert parse_message(text, *_names()).subject.gpus == (gpu,)
