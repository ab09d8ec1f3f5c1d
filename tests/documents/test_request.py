"""The resource request: sections, figures equal to the plan dict's, consistent arithmetic, DOCX structure."""

from __future__ import annotations

import io
import re
from typing import Any

import docx
import pytest

from service.catalog.loader import Catalog
from service.documents import fmt
from service.documents.errors import DocumentInputError
from service.documents.request import render_request_docx, render_request_markdown
from service.labels import mfu_basis, price_when, public_source
from service.planner.strategy import OFFLOAD_SLOWDOWN

from .conftest import pick

HEADINGS = {
    "zh": ["# AI训练资源申请说明", "## 一、项目背景", "## 二、训练任务", "## 三、资源清单", "## 四、费用估算",
           "## 五、选型依据", "## 六、风险与备选", "## 七、审批"],
    "en": ["# AI Training Resource Request", "## 1. Background", "## 2. Training task", "## 3. Resource list",
           "## 4. Cost estimate", "## 5. Sizing rationale", "## 6. Risks and fallbacks", "## 7. Approval"],
}
PLANS = ["qwen_lora", "llama70_full", "t4_qlora"]
NUMBER = r"[\d,]+(?:\.\d+)?"


def _f(text: str) -> float:
    return float(text.replace(",", ""))


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("plan_name", PLANS)
def test_sections_in_order(plan_name: str, lang: str, plans: dict[str, Any]) -> None:
    md = render_request_markdown(plans[plan_name], lang)  # type: ignore[arg-type]
    positions = [md.index(h + "\n") for h in HEADINGS[lang]]
    assert positions == sorted(positions)
    assert "```mermaid\nflowchart TD\n" in md


@pytest.mark.parametrize("plan_name", PLANS)
def test_figures_equal_the_plan(plan_name: str, plans: dict[str, Any]) -> None:
    p = plans[plan_name]
    top = p["candidates"][0]
    md = render_request_markdown(p, "zh")
    assert f"预计总费用 **{fmt.cny(top['total_cost_cny'])}**" in md
    assert f"**{top['memory']['per_gpu_gib']:.2f} GiB**" in md
    assert f"**{fmt.num(top['training_hours'])} 小时**" in md
    # the price's source as a reader sees it: public addresses, none of our working notes
    assert public_source(top["price"]["source"], top["price"]["confidence"], "zh") in md and price_when(top["price"], "zh") in md
    assert "shared/" not in md and not re.search(r"\bid \d{6,}", md)
    for cloud in p["picks"]:  # the comparison table carries every cloud's pick and its total
        c = pick(p, cloud)
        assert c["instance_type"] in md and fmt.cny(c["total_cost_cny"]) in md and c["quote_link"] in md


@pytest.mark.parametrize("plan_name", PLANS)
def test_memory_sum_matches_the_plan(plan_name: str, plans: dict[str, Any]) -> None:
    mem = plans[plan_name]["candidates"][0]["memory"]
    md = render_request_markdown(plans[plan_name], "en")
    line = next(x for x in md.splitlines() if x.startswith("Per-GPU memory = "))
    m = re.match(rf"Per-GPU memory = (.*) ([=≈]) \*\*({NUMBER}) GiB\*\*", line)
    assert m, line
    terms = [float(x) for x in re.findall(r" (\d+\.\d\d)", " " + m.group(1))]
    expected = [mem[k] for k in ("weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "overhead_gib")]
    assert terms == expected
    assert _f(m.group(3)) == mem["per_gpu_gib"]
    # '=' only when the rounded terms add up exactly; otherwise '≈' and the rounding is explained
    exact = abs(round(sum(terms), 2) - mem["per_gpu_gib"]) < 0.005
    assert (m.group(2) == "=") == exact
    assert exact or "rounded to 0.01 GiB" in line


@pytest.mark.parametrize("plan_name", PLANS)
def test_time_arithmetic_is_consistent(plan_name: str, plans: dict[str, Any]) -> None:
    p = plans[plan_name]
    top = p["candidates"][0]
    md = render_request_markdown(p, "en")
    m = re.search(rf"Training time: ({NUMBER}) ÷ ({NUMBER}) ÷ 3600(?: \(the throughput includes the CPU offload "
                  rf"slowdown of ({NUMBER})x)?.*≈ \*\*({NUMBER}) h\*\*", md)
    assert m, "time line missing"
    tokens, rate, hours = _f(m.group(1)), _f(m.group(2)), _f(m.group(4))
    slowdown = _f(m.group(3)) if m.group(3) else 1.0
    assert (tokens, rate, hours) == (p["job"]["tokens_total"], top["throughput_tokens_per_s"], top["training_hours"])
    assert slowdown == OFFLOAD_SLOWDOWN[top["strategy"]["offload"]]
    # throughput (which includes the offload slowdown) is rounded to 0.1 token/s and hours to 0.01 h
    assert tokens / rate / 3600 == pytest.approx(hours, rel=0.01, abs=0.01)
    assert mfu_basis(top["mfu_source"], "en") in md and "sizing.md" not in md


def test_peak_tflops_cited_when_catalog_given(plans: dict[str, Any], catalog: Catalog) -> None:
    p = plans["qwen_lora"]
    gpu = catalog.gpu(p["candidates"][0]["gpu"])
    md = render_request_markdown(p, "en", catalog=catalog)
    assert f"Peak per GPU: {fmt.num(gpu.dense_16bit_tflops)} TFLOPS" in md


def test_applicant_fields_fill_the_approval_block(plans: dict[str, Any]) -> None:
    who = {"name": "张三", "department": "算法平台部", "approver": "李四", "date": "2026-10-01",
           "project": "客服问答微调", "background": "用历史工单训练问答模型"}
    md = render_request_markdown(plans["qwen_lora"], "zh", who)
    for value in who.values():
        assert value in md
    assert fmt.BLANK in md  # contact was not given: a line to fill in


def test_alternatives_and_spot_in_risks(plans: dict[str, Any]) -> None:
    with_alts = [p for p in plans.values() if p["alternatives"]]
    assert with_alts  # (the one-GPU qwen_lora pick is both the cheapest and the fastest: no alternative there)
    for p in with_alts:
        risks = render_request_markdown(p, "en")
        risks = risks[risks.index("## 6. Risks"):]
        assert all(name in risks for name in p["alternatives"].values())
    p = plans["qwen_lora"]
    md = render_request_markdown(p, "en")
    risks = md[md.index("## 6. Risks"):]
    spot = p["candidates"][0]["cost_cny"]["spot"]
    assert fmt.cny(spot["total_cny"]) in risks and "reclaimed" in risks


def test_other_candidate_can_be_requested(plans: dict[str, Any]) -> None:
    p = plans["qwen_lora"]
    second = p["candidates"][1]
    md = render_request_markdown(p, "en", candidate_index=1)
    assert f"estimated total **{fmt.cny(second['total_cost_cny'])}**" in md


@pytest.mark.parametrize("bad, match", [
    ({"candidates": []}, "No configuration to document"),  # infeasible plan: nothing to request
    ({"job": None}, "plan_to_dict's shape"),  # not a plan dict
])
def test_unusable_plans_raise_actionable_errors(plans: dict[str, Any], bad: dict[str, Any], match: str) -> None:
    p = {**plans["qwen_lora"], **bad}
    with pytest.raises(DocumentInputError, match=match):
        render_request_markdown(p, "zh")


def test_candidate_index_out_of_range(plans: dict[str, Any]) -> None:
    with pytest.raises(DocumentInputError, match="out of range"):
        render_request_markdown(plans["qwen_lora"], "en", candidate_index=10_000)


@pytest.mark.parametrize("lang, cost_heading, cloud", [("zh", "四、费用估算", "腾讯云"),
                                                       ("en", "4. Cost estimate", "Tencent Cloud")])
def test_docx_has_headings_and_cost_tables(plans: dict[str, Any], lang: str, cost_heading: str, cloud: str) -> None:
    p = plans["qwen_lora"]
    doc = docx.Document(io.BytesIO(render_request_docx(p, lang)))  # type: ignore[arg-type]
    headings = [x.text for x in doc.paragraphs if x.style is not None and x.style.name.startswith("Heading")]
    assert cost_heading in headings and len(headings) >= 10
    comparison = [t for t in doc.tables if cloud in [c.text for c in t.rows[0].cells]]
    assert comparison, "no Tencent-vs-JD table"
    cells = {c.text for row in comparison[0].rows for c in row.cells}
    assert fmt.cny(p["candidates"][0]["total_cost_cny"]) in cells
    assert "|" not in "".join(cells).replace("\\|", "")  # no Markdown pipes leaked into cells
    assert "**" not in "".join(x.text for x in doc.paragraphs)  # bold markers became runs


def test_cloud_without_a_pick_is_named(plans: dict[str, Any]) -> None:
    p = plans["qwen_lora"]
    tencent_only = {**p, "picks": {"tencent": p["picks"]["tencent"]}}
    assert "no feasible option" not in render_request_markdown(p, "en")
    assert "JD Cloud: no feasible option in this plan" in render_request_markdown(tencent_only, "en")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_document_says_why_the_pick_beats_the_cheaper_option(catalog: Catalog, lang: str) -> None:
    # Regression: the approval document said the pick ranks first ("cheapest") and then listed a cheaper option
    # without the reason the page gives (the plan's pick_reasons: here the cheaper one is tight on memory)
    # a cheaper option that is tight on memory, set explicitly (the shipped prices move with their sources, issue 39)
    from dataclasses import replace

    from service.catalog.schema import PriceRow
    from service.planner.plan import plan
    from service.planner.report import plan_to_dict
    from service.workload import Workload

    from .conftest import TODAY

    tight = PriceRow(instance_type="GNV4v.3XLARGE58", billing="on_demand", price_cny=5.74, unit="hour",
                     source="https://example.com/test", as_of=TODAY, confidence="estimate", anchor="a test figure")
    catalog = replace(catalog, prices=tuple(x for x in catalog.prices if not (
        x.instance_type == "GNV4v.3XLARGE58" and x.billing == "on_demand")) + (tight,))
    p = plan_to_dict(plan(Workload(model="Qwen2-7B", method="qlora", samples=100_000, budget_cny=3000), catalog,
                          today=TODAY))
    why = p["pick_reasons"]["tencent"]
    assert why["instance_type"] == p["picks"]["tencent"] and p["alternatives"]["cheaper"] == why["cheapest"]
    reason = why["message_zh"] if lang == "zh" else why["message"]
    lines = render_request_markdown(p, lang).splitlines()
    ranked = next(line for line in lines if "排名第" in line or "It ranks #" in line)
    cheaper = next(line for line in lines if line.startswith(("- 更便宜：", "- Cheaper:")))
    assert reason in ranked  # beside "ranks #1 (objective: cheapest)"
    assert why["cheapest"] in cheaper and reason in cheaper  # on the cheaper option's own line
    text = "\n".join(x.text for x in docx.Document(io.BytesIO(render_request_docx(p, lang))).paragraphs)
    assert text.count(reason) >= 2
