"""Why a cloud's pick is neither its cheapest nor its fastest option, in words a reader checks against the table.

    pick_reasons(result)   # {cloud: {instance_type, code, message, message_zh, cheapest, fastest, versus}}

Only clouds whose pick is neither get an entry. The reason is the ranking rule that put the pick first
(planner/plan.py: _rank, _prefer_published): a published price preferred over an estimate within ESTIMATE_TIE, a
tight fit costed TIGHT_PREMIUM dearer, a cheaper option that misses the deadline or the budget, costs that tie (the faster goes first), or the balanced
objective. Every figure comes from the candidates themselves.
"""

from __future__ import annotations

from service.labels import confidence_label
from service.planner.candidate import Candidate, PlanResult
from service.planner.plan import COST_TIE, ESTIMATE_TIE, TIGHT_PREMIUM

_TRUST = {"official": 0, "user": 0, "third_party": 1, "estimate": 2}


def _trust(c: Candidate) -> int:
    return _TRUST.get(c.cost.price.confidence, 3) if c.cost is not None else 3


def _cny(x: float) -> str:
    return f"¥{x:,.0f}"


def _h(x: float) -> str:
    return f"{x:.1f}"


def _reason(pick: Candidate, cheapest: Candidate, fastest: Candidate, objective: str) -> tuple[str, str, str]:
    """(code, English, Chinese): the rule that ranked `pick` before the cheaper (or, for `fastest`, the faster)."""
    p, c, f = pick.inst.instance_type, cheapest.inst.instance_type, fastest.inst.instance_type
    if objective == "balanced":
        return ("balanced",
                f"Balanced: {p} weighs cost against time; {c} is cheaper ({_cny(cheapest.total_cny)}) but takes "
                f"{_h(cheapest.hours)} h, {f} is faster ({_h(fastest.hours)} h) but costs {_cny(fastest.total_cny)}.",
                f"均衡优先：{p} 兼顾费用与时长；{c} 更便宜（{_cny(cheapest.total_cny)}）但需 {_h(cheapest.hours)} 小时，"
                f"{f} 更快（{_h(fastest.hours)} 小时）但要 {_cny(fastest.total_cny)}。")
    other = fastest if objective == "fastest" else cheapest
    o = other.inst.instance_type
    if other.meets_deadline is False and pick.meets_deadline is not False:
        return ("cheaper_misses_deadline" if other is cheapest else "faster_misses_deadline",
                f"{o} misses the deadline ({_h(other.hours)} h); {p} meets it.",
                f"{o} 赶不上期限（需 {_h(other.hours)} 小时），{p} 能按时完成。")
    if other.within_budget is False and pick.within_budget is not False:
        return ("cheaper_over_budget" if other is cheapest else "faster_over_budget",
                f"{o} is over the budget; {p} is within it.", f"{o} 超出预算，{p} 在预算内。")
    if objective == "fastest":
        return ("ranked", f"{p} is ranked first by time among the options that fit the budget and deadline.",
                f"{p} 在满足预算和期限的方案中按时长排第一。")
    tight = cheapest.verdict()
    if tight.status != "fits" and pick.verdict().status == "fits" and \
            pick.total_cny <= cheapest.total_cny * (1 + TIGHT_PREMIUM):
        need, cap = f"{tight.need_gib:.1f}", f"{tight.capacity_gib:.1f}"
        return ("cheaper_tight",
                f"{c} is {_cny(pick.total_cny - cheapest.total_cny)} cheaper ({_cny(cheapest.total_cny)}) but tight on "
                f"memory ({need} of {cap} GiB per GPU); estimates run 10-20 % off, so it may OOM. {p} has room "
                f"and costs under {TIGHT_PREMIUM:.0%} more.",
                f"{c} 便宜 {_cny(pick.total_cny - cheapest.total_cny)}（{_cny(cheapest.total_cny)}），但显存紧张（每卡 "
                f"{need} / {cap} GiB），显存估算误差约 10-20 %，可能 OOM；{p} 显存有余量，贵不到 {TIGHT_PREMIUM:.0%}。")
    if _trust(cheapest) > _trust(pick) and pick.total_cny <= cheapest.total_cny * (1 + ESTIMATE_TIE):
        kind = cheapest.cost.price.confidence if cheapest.cost is not None else "estimate"
        tie = f"{ESTIMATE_TIE:.0%}"
        what_en = "an estimate (no published price)" if kind == "estimate" else f"a {confidence_label(kind, 'en')} capture"
        what_zh = "估算（没有公开价格）" if kind == "estimate" else f"{confidence_label(kind, 'zh')}采集"
        save, vs = _cny(pick.total_cny - cheapest.total_cny), f"{_cny(cheapest.total_cny)}, {_cny(pick.total_cny)}"
        return ("published_price",
                f"{c} is only {save} cheaper ({vs}), but its price is {what_en}; within {tie} the published price "
                f"of {p} goes first.",
                f"{c} 只便宜 {save}（{_cny(cheapest.total_cny)} 对 {_cny(pick.total_cny)}），但其价格是{what_zh}；"
                f"差价在 {tie} 以内时优先选有公开价格的 {p}。")
    if pick.total_cny <= cheapest.total_cny * (1 + COST_TIE) and pick.hours < cheapest.hours:
        return ("cost_tie",
                f"{p} and {c} cost the same within {COST_TIE:.1%}; the faster of the two goes first.",
                f"{p} 与 {c} 费用相差不到 {COST_TIE:.1%}，视为持平，优先选更快的。")
    return ("ranked", f"{p} is ranked first by cost and time.", f"{p} 按费用和时长排第一。")


def pick_reasons(r: PlanResult) -> dict[str, dict[str, object]]:
    """Per cloud whose pick is neither the cheapest priced nor the fastest of its options: why it is the pick."""
    out: dict[str, dict[str, object]] = {}
    for cloud, pick in r.picks().items():
        mine = [c for c in r.candidates if c.inst.cloud == cloud]
        priced = [c for c in mine if c.priced]
        if not pick.priced or not priced:
            continue
        cheapest = min(priced, key=lambda c: (c.total_cny, c.hours))
        fastest = min(priced, key=lambda c: (c.hours, c.total_cny))
        if pick.total_cny <= cheapest.total_cny + 0.5 or pick.hours <= fastest.hours:
            continue
        code, en, zh = _reason(pick, cheapest, fastest, r.workload.objective)
        versus = [x.inst.instance_type for x in (cheapest, fastest) if x.inst.instance_type in en]
        out[cloud] = {"instance_type": pick.inst.instance_type, "code": code, "message": en, "message_zh": zh,
                      "cheapest": cheapest.inst.instance_type, "fastest": fastest.inst.instance_type,
                      "versus": list(dict.fromkeys(versus))}
    return out
