"""Price on request: H800/A800 HCC rows have no public price; the planner sizes and times them like any other,
says 'price on request' with the sales link, ranks them after priced options for cheapest, and a user price
sheet prices them exactly."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from service.catalog.loader import load_catalog
from service.documents.plan_view import read_plan
from service.planner.plan import plan
from service.planner.report import plan_to_dict
from service.workload import Workload

TODAY = date(2026, 12, 1)
KNOWLEDGE = Path(__file__).resolve().parents[2] / "knowledge"


def run(catalog, **fields):  # type: ignore[no-untyped-def]
    return plan(Workload(**fields), catalog, today=TODAY)


def test_h800_filter_returns_h800_candidates_with_time_and_price_on_request(catalog) -> None:
    r = run(catalog, model="qwen2-7b", method="lora", gpu_include=["H800"])
    assert r.candidates, r.rejected
    top = r.candidates[0]
    assert top.gpu.id.startswith("H800") and top.cost is None and top.hours > 0
    d = top.as_dict()
    assert d["billing"] == "on_request" and d["price_on_request"] is True and d["total_cost_cny"] is None
    assert d["memory_per_gpu_gib"] > 0 and d["training_hours"] > 0 and d["nodes"] >= 1
    note = next(w for w in top.warnings if w.code == "price_on_request")
    assert "Price on request" in note.en and "价格需询价" in note.zh
    assert "https://cloud.tencent.com/act/event/connect-service" in note.en
    plan_to_dict(r)  # the JSON contract serialises an unpriced pick


def test_a800_estimate_range_is_labelled_and_scales_with_hours(catalog) -> None:
    r = run(catalog, model="qwen2-7b", method="lora", gpu_include=["A800"])
    top = r.candidates[0]
    assert top.cost is None and top.quote is not None and top.quote.reference is not None
    lo, hi = top.quote.low_cny, top.quote.high_cny
    assert lo is not None and hi is not None and 0 < lo < hi
    ref = top.quote.reference
    assert hi == ref.price_cny * top.hours * top.strategy.nodes
    assert "Estimate only" in next(w.en for w in top.warnings if w.code == "price_on_request")


def test_unpriced_rank_after_priced_for_cheapest_and_by_time_for_fastest(catalog) -> None:
    cheap = run(catalog, model="qwen2-7b", method="lora").candidates
    flags = [c.priced for c in cheap]
    assert False in flags and True in flags
    assert flags == sorted(flags, reverse=True)  # every priced one first
    fast = run(catalog, model="qwen2-7b", method="lora", objective="fastest").candidates
    ok = [c for c in fast if c.ok]
    hours = [c.hours for c in ok]
    assert all(b >= a - 0.006 for a, b in zip(hours, hours[1:], strict=False))  # by time (rounded to 0.01 h)
    assert any(not c.priced for c in fast[:5])  # 8-GPU HCC nodes are among the fastest, priced or not


def test_price_sheet_prices_an_on_request_row_exactly(tmp_path: Path) -> None:
    sheet = tmp_path / "quote.csv"
    sheet.write_text("instance_type,billing,price_cny,unit,source,as_of,confidence\n"
                     "HCCPNV5,on_demand,300,hour,sales quote,2026-11-30,official\n", encoding="utf-8")
    cat = load_catalog(KNOWLEDGE, prices_file=sheet)
    top = run(cat, model="qwen2-7b", method="lora", gpu_include=["H800"]).candidates[0]
    assert top.cost is not None and top.cost.price.price_cny == 300
    assert top.cost.total_cny == 300 * top.hours * top.strategy.nodes


def test_documents_set_on_request_candidates_aside_with_a_note(catalog) -> None:
    d = plan_to_dict(run(catalog, model="qwen2-7b", method="lora", objective="fastest"))
    view = read_plan(d)
    assert all(c.total_cost_cny is not None for c in view.candidates)
    assert any(n.code == "price_on_request" and "价格需询价" in n.message_zh for n in view.notes)


def test_a_published_price_ranks_before_a_node_with_no_public_price(catalog) -> None:
    # On A100 40GB: GT4 at its list price, and an 8 x A100 HCC node whose only price was a non-public sheet (issue
    # 39): now "price on request" beside a market reference, sized like any other and ranked after the priced one.
    r = run(catalog, model="Qwen2-7B", samples=100_000, budget_cny=3000, gpu_include=["A100-40G-SXM"])
    top, hcc = r.candidates[0], next(c for c in r.candidates if c.inst.instance_type == "HCCPNV4h")
    assert top.inst.family == "GT4" and top.cost is not None and top.cost.price.confidence == "official"
    assert r.candidates.index(hcc) > r.candidates.index(top)
    assert hcc.cost is None and hcc.quote is not None and hcc.quote.reference is not None
    assert hcc.quote.reference.anchor == "GT4.41XLARGE948 on_demand"
