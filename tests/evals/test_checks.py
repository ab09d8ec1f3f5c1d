"""The scorers, one by one: a right answer scores 1, a wrong one 0 (each test builds the wrong answer it needs)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from service.catalog.loader import Catalog
from service.evals import checks
from service.evals.dataset import Expect
from service.evals.truth import top, truth_plan

GOLD = {"model": "Qwen2-7B", "samples": 100000, "budget_cny": 3000.0, "budget_period": "month"}


# ------------------------------------------------------------------------------------------------------ slots


def test_every_gold_slot_right_scores_all(catalog: Catalog) -> None:
    got = {**GOLD, "method": "lora", "epochs": None}
    results = checks.score_slots(GOLD, got, catalog)
    assert [r.field for r in results] == list(GOLD)
    assert all(r.ok for r in results)


@pytest.mark.parametrize(
    ("field", "wrong"),
    [
        ("model", "Qwen2-72B"),  # another model of the family
        ("samples", 10000),  # 十万 read as 一万
        ("budget_cny", 1.0),  # '一共两万元' read as ¥1
        ("budget_period", "total"),  # the period flipped
    ],
)
def test_a_wrong_slot_scores_zero(catalog: Catalog, field: str, wrong: Any) -> None:
    got = {**GOLD, field: wrong}
    by_field = {r.field: r.ok for r in checks.score_slots(GOLD, got, catalog)}
    assert by_field[field] is False
    assert sum(by_field.values()) == len(GOLD) - 1


def test_no_workload_in_the_answer_scores_every_slot_zero(catalog: Catalog) -> None:
    assert not any(r.ok for r in checks.score_slots(GOLD, None, catalog))


@pytest.mark.parametrize(
    ("field", "gold", "got"),
    [
        ("model", "Qwen2-7B", "Qwen2-7B-Instruct"),  # an alias names the same architecture
        ("gpu_include", ["A100"], ["A100-40G-SXM"]),  # the user's name against the catalog id it resolves to
        ("gpu_exclude", ["T4", "V100"], ["V100-32G-SXM2", "T4"]),  # order does not matter
        ("clouds", ["tencent"], ["tencent"]),
        ("samples", 15000, 15000.0),  # int against float
        ("tokens", 1e10, 1.00000001e10),  # float noise
    ],
)
def test_equal_after_normalisation(catalog: Catalog, field: str, gold: Any, got: Any) -> None:
    assert checks.score_slots({field: gold}, {field: got}, catalog)[0].ok


@pytest.mark.parametrize(
    ("field", "gold", "got"),
    [
        ("gpu_include", ["A100"], ["V100-32G-SXM2"]),
        ("gpu_exclude", ["V100", "T4"], ["V100-32G-SXM2"]),  # one of two missing
        ("clouds", ["jdcloud"], []),
        ("tokens", 1e10, 1e9),
    ],
)
def test_different_after_normalisation(catalog: Catalog, field: str, gold: Any, got: Any) -> None:
    assert not checks.score_slots({field: gold}, {field: got}, catalog)[0].ok


def test_unstated_slots_name_what_the_reader_added() -> None:
    got = {"model": "Baichuan2-13B", "gpu_include": ["V100-32G-SXM2"], "method": "lora", "quant_bits": None}
    assert checks.unstated_slots({"model": "Baichuan2-13B"}, got) == {"gpu_include": ["V100-32G-SXM2"]}
    # QLoRA's default 4 bits made explicit is not an addition
    assert checks.unstated_slots({"method": "qlora"}, {"method": "qlora", "quant_bits": 4}) == {}


# ------------------------------------------------------------------------------------------------- the plan


def test_config_match(qwen_plan: dict[str, Any], catalog: Catalog) -> None:
    assert checks.config_match(qwen_plan, qwen_plan).ok
    other = truth_plan({**GOLD, "method": "full"}, catalog).plan
    assert checks.config_match(other, qwen_plan).ok is False
    assert checks.config_match(None, qwen_plan).ok is False  # the answer did not plan
    assert checks.config_match(qwen_plan, None).ok is None  # no ground truth: not applicable


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("instance_type", "GN7.2XLARGE32"),  # another instance
        ("zero_stage", 3),  # same instance, other ZeRO stage
        ("method", "qlora"),  # same instance, other method
    ],
)
def test_config_mismatch_on_each_key(qwen_plan: dict[str, Any], key: str, value: Any) -> None:
    wrong = copy.deepcopy(qwen_plan)
    target = wrong["candidates"][0] if key == "instance_type" else wrong["candidates"][0]["strategy"]
    target[key] = value
    assert checks.config_match(wrong, qwen_plan).ok is False


def test_both_without_candidates_match(catalog: Catalog) -> None:
    none = truth_plan({"model": "Llama-3.1-405B", "method": "full", "gpu_count": 1}, catalog).plan
    assert top(none) is None
    assert checks.config_match(none, none).ok


def test_feasibility_re_sizes_the_top_pick(qwen_plan: dict[str, Any], catalog: Catalog) -> None:
    workload = qwen_plan["workload"]
    assert checks.feasibility(qwen_plan, workload, catalog).ok
    small = copy.deepcopy(qwen_plan)
    small["candidates"][0]["gpu_memory_gib"] = 8.0  # the same setup on an 8 GiB card
    assert checks.feasibility(small, workload, catalog).ok is False
    heavy = copy.deepcopy(qwen_plan)
    heavy["candidates"][0]["strategy"].update(method="full", zero_stage=0)  # full fine-tune of 7B on one 40G GPU
    assert checks.feasibility(heavy, workload, catalog).ok is False
    assert checks.feasibility(None, workload, catalog).ok is None


def test_verdicts_against_the_truth(qwen_plan: dict[str, Any]) -> None:
    assert checks.verdict("within_budget", qwen_plan, qwen_plan).ok
    flipped = copy.deepcopy(qwen_plan)
    flipped["candidates"][0]["within_budget"] = False
    assert checks.verdict("within_budget", flipped, qwen_plan).ok is False
    assert checks.verdict("within_budget", None, qwen_plan).ok is False


def test_required_warnings(qwen_plan: dict[str, Any]) -> None:
    warned = copy.deepcopy(qwen_plan)
    top(warned)["warnings"].append({"code": "memory_tight", "severity": "warning", "message": "m", "message_zh": "m"})
    codes = checks.warning_codes(top(warned))
    assert checks.warnings(Expect(must_warn=codes[:1]), warned).ok
    assert checks.warnings(Expect(must_warn=["no_bf16"]), qwen_plan).ok is False  # A100 has BF16: no warning
    assert checks.warnings(Expect(), qwen_plan).ok is None


def test_citations() -> None:
    cited = [{"id": "guide/03-gpu-specs-precision.zh.md#fp8"}]
    assert checks.citations(True, cited).ok
    assert checks.citations(True, []).ok is False
    assert checks.citations(["fp8", "A10"], cited).ok
    assert checks.citations(["nvlink"], cited).ok is False
    assert checks.citations(None, []).ok is None


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("## 推荐配置：Qwen2-7B · LoRA 微调\n| 腾讯云 | GT4.4XLARGE96 | A100 |", "zh"),
        # English prose quoting a Chinese source file name is still English
        ("## Recommended configuration: Qwen2-7B · LoRA\nThe price comes from a third-party capture of 计算型实例.md; "
         "confirm it in the console before you plan on it.", "en"),
        ("", None),
    ],
)
def test_prose_language(text: str, lang: str | None) -> None:
    assert checks.prose_language(text) == lang


def test_language_needs_the_declared_and_the_written_language() -> None:
    zh = {"language": "zh", "answer_markdown": "推荐使用腾讯云的 A100 实例进行训练。"}
    assert checks.language("zh", zh).ok
    assert checks.language("en", zh).ok is False
    assert checks.language("zh", {**zh, "language": "en"}).ok is False  # declared wrong
    assert checks.language("zh", {**zh, "answer_markdown": "Use an A100 instance."}).ok is False  # written wrong


def test_expectations(qwen_plan: dict[str, Any], catalog: Catalog) -> None:
    first = top(qwen_plan)
    assert first is not None
    multi = int(first["total_gpus"]) > 1  # the top pick may be a 2-GPU size that ties on cost and wins on time
    right = Expect(within_budget=True, top_cloud=first["cloud"], must_not_fit_single_gpu=multi)
    assert checks.expectations(right, qwen_plan).ok
    assert checks.expectations(Expect(within_budget=False), qwen_plan).ok is False
    assert checks.expectations(Expect(infeasible=True), qwen_plan).ok is False
    assert checks.expectations(Expect(must_not_fit_single_gpu=not multi), qwen_plan).ok is False
    assert checks.expectations(Expect(top_cloud="jdcloud"), qwen_plan).ok is False
    assert checks.expectations(Expect(), qwen_plan).ok is None


def test_a_warning_with_alternatives_is_met_by_either() -> None:
    expect = Expect(must_warn=["no_nvlink|multinode_no_rdma", "host_ram_low"])
    assert expect.missing_warnings(["multinode_no_rdma", "host_ram_low"]) == []
    assert expect.missing_warnings(["no_nvlink"]) == ["host_ram_low"]
    assert expect.missing_warnings([]) == ["no_nvlink|multinode_no_rdma", "host_ram_low"]
