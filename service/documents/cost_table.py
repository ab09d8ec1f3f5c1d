"""Cost tables in Markdown: every candidate, the Tencent-vs-JD comparison, and one pick's billing modes."""

from __future__ import annotations

from service.documents import fmt
from service.documents.fmt import BILLING, CLOUD, label, tr
from service.documents.plan_view import CLOUD_ORDER, CandidateView, Lang, PlanInput, PlanView, read_plan
from service.labels import host_text

BILLING_ORDER = ("on_demand", "monthly", "spot")


def render_cost_table(plan: PlanInput, lang: Lang, limit: int | None = None) -> str:
    """One row per candidate in the plan's rank order: cloud, instance, GPUs, hours, billing, cost, price source."""
    view = read_plan(plan, lang)
    cands = view.candidates if limit is None else view.candidates[:limit]
    headers = [tr(lang, "排名", "Rank"), tr(lang, "云厂商", "Cloud"), tr(lang, "实例规格", "Instance"),
               "GPU", tr(lang, "训练时长（小时）", "Hours"), tr(lang, "计费方式", "Billing"),
               tr(lang, "单价", "Unit price"), tr(lang, "总费用", "Total cost"),
               tr(lang, "月度费用", "Monthly cost"), tr(lang, "价格来源", "Price source"),
               tr(lang, "价格日期", "Price date"), tr(lang, "可信度", "Confidence")]
    rows = [[str(i + 1), label(CLOUD, c.cloud, lang), c.instance_type, fmt.gpus(c, lang), fmt.num(c.training_hours),
             label(BILLING, c.billing, lang), fmt.unit_price(c.price, lang), fmt.cny(c.total_cost_cny),
             fmt.cny(c.monthly_cost_cny), c.price.source, c.price.date(lang), fmt.confidence(c.price, lang)]
            for i, c in enumerate(cands)]
    return fmt.table(headers, rows)


def _mode_total(c: CandidateView, billing: str, lang: Lang) -> str:
    line = c.cost_cny.get(billing)
    if line is None:
        return tr(lang, "无价格", "no price")
    total, price = fmt.cny(line.total_cny), fmt.unit_price(line.price, lang)
    return tr(lang, f"{total}（{price}）", f"{total} ({price})")


def comparison_table(view: PlanView, lang: Lang) -> str:
    """Attributes down, one column per cloud's pick (Tencent first)."""
    picks = view.cloud_picks()
    if not picks:
        return tr(lang, "（规划结果中没有可比较的云厂商方案）", "(The plan has no per-cloud pick to compare.)")
    budget = view.workload.budget_cny
    rows: list[list[str]] = [
        [tr(lang, "实例规格", "Instance"), *[c.instance_type for c in picks]],
        ["GPU", *[fmt.gpus(c, lang) for c in picks]],
        [tr(lang, "每节点 vCPU / 内存", "vCPU / RAM per node"),
         *[host_text(c.vcpus, c.memory_gib, lang) for c in picks]],
        [tr(lang, "训练策略", "Strategy"), *[c.strategy.label for c in picks]],
        [tr(lang, "训练时长（小时）", "Training hours"), *[fmt.num(c.training_hours) for c in picks]],
        [tr(lang, "推荐计费方式", "Billing chosen"), *[label(BILLING, c.billing, lang) for c in picks]],
        [tr(lang, "单价", "Unit price"), *[fmt.unit_price(c.price, lang) for c in picks]],
        [tr(lang, "价格来源", "Price source"), *[c.price.source for c in picks]],
        [tr(lang, "价格日期", "Price date"), *[c.price.date(lang) for c in picks]],
        [tr(lang, "可信度", "Confidence"), *[fmt.confidence(c.price, lang) for c in picks]],
        [tr(lang, "总费用", "Total cost"), *[fmt.cny(c.total_cost_cny) for c in picks]],
        [tr(lang, "月度费用", "Monthly cost"), *[fmt.cny(c.monthly_cost_cny) for c in picks]],
    ]
    for billing in BILLING_ORDER:
        if any(billing in c.cost_cny for c in picks):
            rows.append([tr(lang, f"{label(BILLING, billing, lang)}合计", f"Total if {label(BILLING, billing, lang)}"),
                         *[_mode_total(c, billing, lang) for c in picks]])
    rows += [
        [tr(lang, "预算", "Budget"),
         *[fmt.budget_text(c, budget, view.workload.budget_period, lang) for c in picks]],
        [tr(lang, "报价链接", "Quote link"), *[c.quote_link for c in picks]],
    ]
    out = fmt.table([tr(lang, "项目", "Item"), *[label(CLOUD, c.cloud, lang) for c in picks]], rows)
    wanted = view.workload.clouds or list(CLOUD_ORDER)
    missing = [label(CLOUD, cloud, lang) for cloud in wanted if cloud not in view.picks]
    if missing:
        out += "\n\n" + tr(lang, f"{'、'.join(missing)}：本次规划没有可行方案（GPU 过滤、显存或价格缺失，见规划的 rejected 列表）。",
                            f"{', '.join(missing)}: no feasible option in this plan (GPU filter, memory or missing "
                            "price; see the plan's rejected list).")
    return out


def billing_modes_table(c: CandidateView, lang: Lang) -> str:
    """The chosen instance under each billing mode the catalog prices."""
    headers = [tr(lang, "计费方式", "Billing"), tr(lang, "单价", "Unit price"), tr(lang, "总费用", "Total"),
               tr(lang, "月度费用", "Monthly"), tr(lang, "来源", "Source"), tr(lang, "日期", "Date"),
               tr(lang, "可信度", "Confidence"), tr(lang, "说明", "Note")]
    rows = []
    for billing in BILLING_ORDER:
        line = c.cost_cny.get(billing)
        if line is None:
            continue
        mark = tr(lang, "（推荐）", " (chosen)") if billing == c.billing else ""
        rows.append([label(BILLING, billing, lang) + mark, fmt.unit_price(line.price, lang), fmt.cny(line.total_cny),
                     fmt.cny(line.monthly_cny), line.price.source, line.price.date(lang),
                     fmt.confidence(line.price, lang), line.price.note])
    return fmt.table(headers, rows)


def cost_summary(view: PlanView, c: CandidateView, lang: Lang) -> str:
    budget = fmt.budget_text(c, view.workload.budget_cny, view.workload.budget_period, lang)
    billing = label(BILLING, c.billing, lang)
    if lang == "zh":
        head = (f"推荐方案：**{fmt.instance(c, lang)}**，{billing}，预计总费用 **{fmt.cny(c.total_cost_cny)}**，"
                f"月度费用 {fmt.cny(c.monthly_cost_cny)}；{budget}。")
    else:
        head = (f"Recommended: **{fmt.instance(c, lang)}**, {billing}, estimated total **{fmt.cny(c.total_cost_cny)}**, "
                f"monthly {fmt.cny(c.monthly_cost_cny)}; {budget}.")
    return head + "\n\n" + billing_modes_table(c, lang)
