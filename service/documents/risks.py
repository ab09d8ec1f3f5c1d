"""Risks and fallbacks (风险与备选): warnings, alternatives, spot interruption, prices to confirm."""

from __future__ import annotations

from service.documents import fmt
from service.documents.fmt import BILLING, CONFIDENCE, label, tr
from service.documents.plan_view import CandidateView, Lang, PlanView
from service.sizing.compute import SPOT_RERUN_OVERHEAD


def _warnings(view: PlanView, chosen: CandidateView, lang: Lang) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    cands = [chosen, *[c for c in view.cloud_picks() if c is not chosen]]
    for c in cands:
        for w in c.warnings:
            text = w.text(lang)
            if text in seen:
                continue
            seen.add(text)
            level = tr(lang, "注意", "warning") if w.severity == "warning" else tr(lang, "提示", "info")
            out.append(f"**{fmt.instance(c, lang)}**（{level}）：{text}" if lang == "zh" else
                       f"**{fmt.instance(c, lang)}** ({level}): {text}")
    return out


def _alt_line(kind: str, c: CandidateView, lang: Lang, why: str = "") -> str:
    name = {"cheaper": tr(lang, "更便宜", "Cheaper"), "faster": tr(lang, "更快", "Faster")}.get(kind, kind)
    detail = tr(lang, f"{fmt.gpus(c, lang)}，{c.strategy.label}，{fmt.num(c.training_hours)} 小时，"
                      f"{label(BILLING, c.billing, lang)} {fmt.cny(c.total_cost_cny)}",
                f"{fmt.gpus(c, lang)}, {c.strategy.label}, {fmt.num(c.training_hours)} h, "
                f"{label(BILLING, c.billing, lang)} {fmt.cny(c.total_cost_cny)}")
    line = f"{name}：**{fmt.instance(c, lang)}**（{detail}）" if lang == "zh" else (
        f"{name}: **{fmt.instance(c, lang)}** ({detail})")
    if why:
        line += tr(lang, f"。推荐方案仍排在它前面：{why}", f". The recommendation still goes first: {why}")
    return line


def _alternatives(view: PlanView, chosen: CandidateView, lang: Lang) -> list[str]:
    lines = []
    for kind in ("cheaper", "faster"):
        c = view.alternative(kind)
        if c is not None:
            why = view.why_not(chosen, c)
            lines.append(_alt_line(kind, c, lang, why.text(lang) if why is not None else ""))
    if not lines:
        lines.append(tr(lang, "规划结果中没有更便宜或更快的备选方案。", "The plan has no cheaper or faster alternative."))
    return lines


def _spot(c: CandidateView, lang: Lang) -> str:
    pct = f"{SPOT_RERUN_OVERHEAD:.0%}"
    spot = c.cost_cny.get("spot")
    if spot is None:
        return tr(lang, f"{c.instance_type} 没有竞价价格；如需降本可改选有竞价价格的规格。",
                  f"{c.instance_type} has no spot price; pick an instance with one to save with spot.")
    if c.billing == "spot":
        return tr(lang, f"本方案使用竞价实例（总费用 {fmt.cny(spot.total_cny)}，已按 {pct} 重跑计入），实例可能随时被回收："
                        "请设置较小的 save_steps，并用 resume_from_checkpoint 断点续训。",
                  f"This plan uses spot ({fmt.cny(spot.total_cny)} total, {pct} rerun time included); instances can "
                  "be reclaimed at any time: keep save_steps small and resume with resume_from_checkpoint.")
    return tr(lang, f"如改用竞价实例，总费用约 {fmt.cny(spot.total_cny)}（单价 {fmt.unit_price(spot.price, lang)}，"
                    f"可信度：{label(CONFIDENCE, spot.price.confidence, lang)}，已按 {pct} 重跑计入），但实例可能随时被回收，"
                    "需设置 save_steps 并支持断点续训。",
              f"With spot instances the total would be about {fmt.cny(spot.total_cny)} ({fmt.unit_price(spot.price, lang)}, "
              f"{label(CONFIDENCE, spot.price.confidence, lang)}, {pct} rerun time included), but instances can be "
              "reclaimed at any time: checkpoint with save_steps and resume.")


def _prices(view: PlanView, lang: Lang) -> list[str]:
    out = []
    for c in view.cloud_picks():
        p = c.price
        conf = fmt.confidence(p, lang)
        if lang == "zh":
            out.append(f"{fmt.instance(c, lang)}：{fmt.unit_price(p, lang)}，来源 {p.source}，日期 {p.date(lang)}，可信度：{conf}。"
                       f"下单前请在 {c.quote_link} 按实际地域、折扣核实。")
        else:
            out.append(f"{fmt.instance(c, lang)}: {fmt.unit_price(p, lang)}, source {p.source}, dated {p.date(lang)}, "
                       f"confidence {conf}. Confirm for your region and discount at {c.quote_link} before ordering.")
    return out


def _verdicts(c: CandidateView, lang: Lang) -> list[str]:
    out = []
    if c.within_budget is False:
        out.append(tr(lang, "推荐方案超出预算：考虑上面的更便宜方案、竞价实例或减少训练轮数。",
                      "The recommended option is over budget: consider the cheaper option, spot, or fewer epochs."))
    if c.meets_deadline is False:
        out.append(tr(lang, "推荐方案无法在期限内完成：考虑上面的更快方案或更多 GPU。",
                      "The recommended option misses the deadline: consider the faster option or more GPUs."))
    return out


def risks(view: PlanView, chosen: CandidateView, lang: Lang) -> str:
    warnings = _warnings(view, chosen, lang) or [tr(lang, "无。", "None.")]
    parts = [
        tr(lang, "**规划警告**", "**Planner warnings**"), fmt.bullets(warnings),
        tr(lang, "**备选方案**", "**Alternatives**"), fmt.bullets(_alternatives(view, chosen, lang) + _verdicts(chosen, lang)),
        tr(lang, "**竞价实例**", "**Spot instances**"), fmt.bullets([_spot(chosen, lang)]),
        tr(lang, "**价格待确认**", "**Prices to confirm**"), fmt.bullets(_prices(view, lang)),
    ]
    return "\n\n".join(parts)
