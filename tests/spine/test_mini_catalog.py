"""Catalog questions, plans and comparisons over the synthetic catalog: every figure is the fixture's price
through the engine, first line first."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from service.catalog.loader import Catalog
from service.catalog.queries import resolve_gpu
from service.questions.turn import Conversation, Turn, previous_of


def first(t: Turn) -> str:
    return t.text.splitlines()[0]


def test_the_fixture_is_small_and_every_price_is_synthetic(mini: Catalog) -> None:
    assert (len(mini.gpus), len(mini.instances), len(mini.models)) == (7, 7, 6)
    assert {p.source for p in mini.prices} == {"scripts/make_mini_catalog.py"}
    assert "HCCPNV5" not in {p.instance_type for p in mini.prices}


@pytest.mark.parametrize(("typed", "gpu_id"), [("a100", "A100-40G-SXM"), ("H800", "H800-SXM"), ("4090", "RTX-4090"),
                                               ("v100 32g", "V100-32G-SXM2")])
def test_names_resolve_within_the_fixture(mini: Catalog, typed: str, gpu_id: str) -> None:
    assert resolve_gpu(typed, mini.gpus)[0].id == gpu_id


def test_a_gpu_price_on_one_cloud_is_the_table_price_with_its_date(ask: Callable[..., Turn]) -> None:
    t = ask("A10在腾讯云多少钱一小时")
    assert t.type == "catalog"
    assert first(t).startswith("腾讯云 PNV4.7XLARGE116（1 × A10）按量计费 ¥10.00/小时（2026-11-01")
    assert "每卡每小时 ¥10.00" in first(t)


def test_monthly_against_on_demand_breaks_even_at_the_ratio_of_the_prices(ask: Callable[..., Turn]) -> None:
    line = first(ask("PNV4.7XLARGE116包月和按量哪个划算"))
    assert "480 小时" in line and "¥4,800/月" in line  # 4800 / 10


def test_the_cheapest_instance_with_40_gb_cards_is_found_per_gpu_hour(ask: Callable[..., Turn]) -> None:
    line = first(ask("显存40G以上最便宜的实例"))
    assert "PNV5b.64XLARGE768" in line and "每卡每小时 ¥20.00" in line  # 160 / 8 beats 240 / 8


def test_an_instance_without_a_price_says_so_with_the_quote_link(ask: Callable[..., Turn]) -> None:
    line = first(ask("HCCPNV5多少钱"))
    assert "没有公开价格" in line and "https://buy.cloud.tencent.com/price/cvm/calculator" in line
    assert "RDMA 的实例" not in line  # 'HCC' inside the name is not an RDMA question


def test_two_gpus_side_by_side_per_gpu_hour_and_per_tflops(ask: Callable[..., Turn], mini: Catalog) -> None:
    line = first(ask("A10和L20每卡每小时多少钱"))
    a10, l20 = mini.gpu("A10"), mini.gpu("L20")
    assert f"{10 / a10.dense_16bit_tflops:.4f}" in line and f"{20 / l20.dense_16bit_tflops:.4f}" in line


def test_a_follow_up_changes_the_cloud(ask: Callable[..., Turn]) -> None:
    t1 = ask("V100多少钱一小时")
    t2 = ask("那京东云呢", Conversation(prev=previous_of(t1.args, t1.type), user_texts=("V100多少钱一小时",)))
    assert t2.type == "catalog" and first(t2).startswith("京东云 p.n1v100.2xlarge") and "¥20.00/小时" in first(t2)


def test_a_comparison_costs_each_option_at_the_fixture_price(ask: Callable[..., Turn]) -> None:
    t = ask("A10和L20哪个划算，训练qwen2-7b lora")
    assert t.type == "compare" and t.answer is not None
    rows = {r["option"]: r for r in t.answer.public()["comparison"]}
    a10 = rows["A10"]
    assert a10["cost_cny"] == pytest.approx(a10["hours"] * 10.0, rel=0.02)  # PNV4.7XLARGE116 at ¥10/h
    assert first(t).startswith("A10 更便宜")


def test_a_plan_is_priced_from_the_fixture(ask: Callable[..., Turn]) -> None:
    t = ask("Qwen2-7B lora微调，10万条数据")
    assert t.type == "plan" and t.answer is not None
    plan = t.answer.public()["plan"]
    rates = {"PNV4.7XLARGE116": 10.0, "PNV4.28XLARGE466": 40.0, "PNV5b.64XLARGE768": 160.0, "GT4.41XLARGE948": 240.0,
             "p.n1v100.2xlarge": 20.0, "p.n1v100.10xlarge": 80.0}
    priced = [c for c in plan["candidates"] if c["billing"] == "on_demand" and c["instance_type"] in rates]
    assert len(priced) >= 3
    for c in priced:
        assert c["total_cost_cny"] == pytest.approx(rates[c["instance_type"]] * c["nodes"] * c["training_hours"],
                                                    rel=0.01)
    assert set(plan["picks"]) <= {"tencent", "jdcloud"} and plan["picks"]
    assert "HCCPNV5" not in {c["instance_type"] for c in priced}  # no price: never costed as if it had one


def test_the_cheapest_under_monthly_billing_shows_the_monthly_price(ask: Callable[..., Turn]) -> None:
    line = first(ask("京东云v100 包月最便宜多少"))
    assert "p.n1v100.2xlarge" in line and "¥6,000.00/月" in line


def test_two_families_are_set_side_by_side(ask: Callable[..., Turn]) -> None:
    t = ask("PNV4 和 GT4 啥区别")
    assert t.answer is not None and t.answer.public()["ask"] == "families"
    line = first(t)
    pnv4, gt4 = line.split("；")
    assert "PNV4" in pnv4 and "A10" in pnv4 and "每卡每小时 ¥10.00" in pnv4  # min(10 / 1, 40 / 4)
    assert "GT4" in gt4 and "A100-40G-SXM" in gt4 and "每卡每小时 ¥30.00" in gt4  # 240 / 8


def test_what_a_family_is_is_answered_from_its_rows(ask: Callable[..., Turn]) -> None:
    t = ask("GT4是什么卡")
    assert t.type == "catalog" and first(t).startswith("GT4 是腾讯云的 A100-40G-SXM 机型族")
