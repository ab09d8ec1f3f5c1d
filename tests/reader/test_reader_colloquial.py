"""Colloquial amounts, relative deadlines and quoted prices (issue 11's misreadings, each row names it)."""

from __future__ import annotations

from datetime import date

import pytest

from service.reader import parse_message
from service.reader.colloquial import approximate_amounts, find_relative_deadline, find_user_price
from tests.reader.test_reader import GPUS, MODELS

TUESDAY = date(2026, 12, 1)  # a Tuesday


def parse(text: str, today: date = TUESDAY) -> dict[str, object]:
    return parse_message(text, MODELS, GPUS, today=today).slots


@pytest.mark.parametrize(("text", "slots"), [
    ("qwen2 7b 两三万条数据", {"samples": 25000}),  # was 230000: the midpoint of 20,000-30,000
    ("qwen2 7b 三四千条", {"samples": 3500}),
    ("qwen2 7b lora, a couple hundred thousand samples", {"samples": 200000}),
    ("qwen2 7b lora, a few thousand samples", {"samples": 3000}),
    ("qwen2 7b 1.5万条 预算5k", {"samples": 15000, "budget_cny": 5000.0}),
    ("qwen2 7b 20w条 月预算2w", {"samples": 200000, "budget_cny": 20000.0, "budget_period": "month"}),
    ("今天周二 周五前要把qwen2 7b lora训完", {"deadline_hours": 72.0}),  # was 336 (read as 两周)
    ("need qwen2 7b lora done by friday, it's tuesday", {"deadline_hours": 72.0}),  # was no deadline
    ("qwen2 7b lora 下周一前", {"deadline_hours": 144.0}),  # from Tuesday 1 Dec to Monday 7 Dec
    ("qwen2 7b lora 月底前训完", {"deadline_hours": 720.0}),  # 1 Dec to 31 Dec: 30 days
    ("qwen2 7b lora with a total budget of ¥20000", {"budget_cny": 20000.0, "budget_period": "total"}),
])
def test_colloquial_slots(text: str, slots: dict[str, object]) -> None:
    got = parse(text)
    assert {k: got.get(k) for k in slots} == slots


@pytest.mark.parametrize(("text", "slots"), [
    ("budget 3000 usd total at 7.2, qwen2 7b lora 100k", {"samples": 100000}),  # was no data size
    ("qwen2 7b lora 8k context", {"samples": None}),  # a context length, not samples
    ("can I do full finetuning of qwen2 7b on a pair of A10s", {"gpu_count": 2}),  # was one card
    ("qwen2 7b lora 10万条 按量改包月能省多少", {"billing": "monthly"}),  # the billing changed to; was on-demand
    ("qwen2 7b lora: how much do i save if i go monthly instead of pay as you go", {"billing": "monthly"}),
    ("qwen2 7b lora, switch from on-demand to monthly", {"billing": "monthly"}),  # was none
    ("qwen2 7b lora 按量计费，不要包月", {"billing": "on_demand"}),
])
def test_counts_and_changes_as_people_write_them(text: str, slots: dict[str, object]) -> None:
    got = parse(text)
    assert {k: got.get(k) for k in slots} == slots


@pytest.mark.parametrize("text", [
    "A100每小时2元的话 qwen2 7b lora 10万条要多少钱",  # was a monthly budget of ¥2
    "我们拿到的报价是8元/卡时，qwen2 7b全参 5万条",
    "we were quoted $2/hr for an A100, lora qwen2 7b",
])
def test_a_quoted_price_is_not_a_budget(text: str) -> None:
    p = parse_message(text, MODELS, GPUS, today=TUESDAY)
    assert "budget_cny" not in p.slots
    # tied to the GPU named (the turn is costed at it and says so), or else said back as a note
    assert p.user_price is not None or any("2" in n or "8" in n for n in p.unparsed_notes)


def test_notes_state_the_assumption() -> None:
    text, notes = approximate_amounts("两三万条")
    assert text == "25000条" and notes[0][0] == "approx"
    deadline, _ = find_relative_deadline("周五前", TUESDAY)
    assert deadline is not None and deadline.hours == 72.0
    quoted, rest = find_user_price("每小时2元")
    assert quoted is not None and quoted.said == "每小时2元" and quoted.amount == 2.0 and "2" not in rest


def test_adjacent_but_not_consecutive_digits_are_a_number() -> None:
    assert approximate_amounts("二十三万")[0] == "二十三万"  # 230,000, not a range
    assert approximate_amounts("两五万")[0] == "两五万"


@pytest.mark.parametrize(("text", "model"), [
    ("minicpm-2b lora 1万条", "minicpm-2b"),  # outside models.yaml: kept by name, sized by the engine from it
    ("Llama-3.2-11B-Vision lora", "Llama-3.2-11B-Vision"),  # the suffix says it is a vision model
    ("fine-tune bge-small-en on 20k pairs", "bge-small-en"),  # a family that tells the kind without a size
])
def test_unknown_models_are_kept_by_name(text: str, model: str) -> None:
    assert parse(text)["model"] == model


def test_a_repo_id_without_a_size_asks_for_one() -> None:
    p = parse_message("someorg/awesome-llm lora 1万条", MODELS, GPUS)
    assert "model" not in p.slots and any("config.json" in n for n in p.unparsed_notes)
    assert parse_message("A10/A100哪个好", MODELS, GPUS).unparsed_notes == []


def test_five_hundred_images_are_samples_not_gpus() -> None:
    got = parse("sdxl lora 500张")
    assert got.get("samples") == 500 and "gpu_count" not in got
    assert parse("128张A100全参")["gpu_count"] == 128
