"""Cost of a job by billing mode, with the price's provenance and budget/deadline verdicts."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date

from service.catalog.queries import best_price, newer_price
from service.catalog.reference import ReferencePrice, reference_line
from service.catalog.schema import InstanceRow, PriceRow
from service.labels import newer_price_text, price_when, public_source, strip_internal
from service.sizing.compute import SPOT_RERUN_OVERHEAD
from service.sizing.host import Note

HOURS_PER_MONTH = 730.0  # 24 x 7 use (the monthly/hourly list ratio is per family: knowledge/catalog/billing_rules.csv)
QUOTE_LINKS = {
    "tencent": "https://buy.cloud.tencent.com/price/cvm/calculator",
    "jdcloud": "https://www.jdcloud.com/calculator/calHost",
}
# Where families with no public price are quoted: Tencent's "联系我们" page (linked from its own docs); for JD the
# calculator, the only JD sales entry point we have a source for.
SALES_LINKS = {
    "tencent": "https://cloud.tencent.com/act/event/connect-service",
    "jdcloud": "https://www.jdcloud.com/calculator/calHost",
}


@dataclass(frozen=True)
class CostLine:
    billing: str
    price: PriceRow
    total_cny: float  # the whole job
    monthly_cny: float  # what one month of this billing costs while the job runs
    months: int  # billed months (monthly billing)
    newer: PriceRow | None = None  # a newer dated price of the same instance (a 2026 capture), shown beside it

    def as_dict(self) -> dict[str, object]:
        return {"billing": self.billing, "total_cny": round(self.total_cny, 2),
                "monthly_cny": round(self.monthly_cny, 2), "months": self.months,
                "price": price_dict(self.price, self.newer)}


def _iso(d: date | None) -> str | None:
    return d.isoformat() if d else None


def newer_dict(n: PriceRow | None) -> dict[str, object] | None:
    """A newer dated price shown beside the one used: its figure, date, kind and source."""
    return None if n is None else {"price_cny": n.price_cny, "unit": n.unit, "as_of": _iso(n.as_of),
                                   "content_as_of": _iso(n.content_as_of), "captured": _iso(n.captured),
                                   "confidence": n.confidence, "promo": n.promo, "source": n.source}


def price_dict(p: PriceRow, newer: PriceRow | None = None) -> dict[str, object]:
    return {"price_cny": p.price_cny, "unit": p.unit, "region": p.region, "source": p.source,
            "as_of": p.as_of.isoformat() if p.as_of else None,
            "captured": p.captured.isoformat() if p.captured else None, "confidence": p.confidence, "note": p.note, "note_zh": p.note_zh,
            "price_low_cny": p.price_low_cny, "promo": p.promo, "on_request": p.on_request, "stale": p.stale,
            "content_as_of": _iso(p.content_as_of), "content_basis": p.content_basis, "newer": newer_dict(newer),
            "date_en": price_when(p, "en"), "date_zh": price_when(p, "zh")}


@dataclass(frozen=True)
class Quote:
    """An instance with no public price (价格需询价): the sales link and, where a dated market reference exists,
    an estimate range for the whole job. The range is never treated as the price."""

    link: str
    reference: PriceRow | None  # an on_request estimate row (hourly), or None when nothing is known
    low_cny: float | None
    high_cny: float | None

    def as_dict(self) -> dict[str, object]:
        r = self.reference
        return {"price_on_request": True, "link": self.link,
                "estimate_total_cny": None if self.low_cny is None or self.high_cny is None
                else [round(self.low_cny, 2), round(self.high_cny, 2)],
                "reference": None if r is None else price_dict(r)}


def _priced(p: PriceRow | None) -> PriceRow | None:
    return None if p is None or p.on_request else p


def quote(inst: InstanceRow, nodes: int, hours: float, prices: tuple[PriceRow, ...]) -> Quote:
    ref = best_price(inst.instance_type, "on_demand", prices)
    link = SALES_LINKS.get(inst.cloud, QUOTE_LINKS.get(inst.cloud, ""))
    if ref is None or not ref.on_request:
        return Quote(link, None, None, None)
    low = (ref.price_low_cny or ref.price_cny) * hours * nodes
    return Quote(link, ref, low, ref.price_cny * hours * nodes)


_SALES = {"tencent": ("Tencent Cloud", "腾讯云"), "jdcloud": ("JD Cloud", "京东云")}


def quote_notes(q: Quote, inst: InstanceRow) -> list[Note]:
    r = q.reference
    who, who_zh = _SALES.get(inst.cloud, (inst.cloud, inst.cloud))
    if r is None:
        return [Note("price_on_request", f"Price on request: {inst.family} has no public price. Ask {who} sales "
                     f"for a quote ({q.link}), or pass your quote with --prices.",
                     f"价格需询价：{inst.family} 没有公开价格，请联系{who_zh}销售获取报价（{q.link}），或提供您的报价单（--prices）。")]
    lo, hi = r.price_low_cny or r.price_cny, r.price_cny
    return [Note("price_on_request",
                 f"Price on request: {inst.family} has no public price. Estimate only: ¥{lo:,.2f}-{hi:,.2f} per "
                 f"instance-hour from a market reference of {price_when(r, 'en')} "
                 f"({r.note}); this job "
                 f"≈ ¥{q.low_cny:,.0f}-{q.high_cny:,.0f}. Ask {who} sales for a quote ({q.link}) or pass it with --prices.",
                 f"价格需询价：{inst.family} 没有公开价格。仅为估算：每实例小时 ¥{lo:,.2f}-{hi:,.2f}，依据 "
                 f"{price_when(r, 'zh')} 的市场参考（{r.note_zh or r.note}）；本任务约 ¥{q.low_cny:,.0f}-"
                 f"{q.high_cny:,.0f}。请联系{who_zh}销售获取报价（{q.link}），或提供您的报价单（--prices）。")]


def cost_lines(inst: InstanceRow, nodes: int, hours: float, prices: tuple[PriceRow, ...]) -> dict[str, CostLine]:
    """Costs by billing mode from published prices; on_request estimates are left to quote()."""
    lines: dict[str, CostLine] = {}
    od = _priced(best_price(inst.instance_type, "on_demand", prices))
    if od is not None:
        lines["on_demand"] = CostLine("on_demand", od, od.price_cny * hours * nodes,
                                      od.price_cny * min(hours, HOURS_PER_MONTH) * nodes, 0, newer_price(od, prices))
    mo = _priced(best_price(inst.instance_type, "monthly", prices))
    if mo is not None:
        months = max(1, math.ceil(hours / HOURS_PER_MONTH))
        lines["monthly"] = CostLine("monthly", mo, mo.price_cny * months * nodes, mo.price_cny * nodes, months,
                                    newer_price(mo, prices))
    sp = _priced(best_price(inst.instance_type, "spot", prices))
    if sp is not None:
        run_hours = hours * (1 + SPOT_RERUN_OVERHEAD)
        lines["spot"] = CostLine("spot", sp, sp.price_cny * run_hours * nodes,
                                 sp.price_cny * min(run_hours, HOURS_PER_MONTH) * nodes, 0)
    return lines


def choose_billing(lines: dict[str, CostLine], wanted: str | None) -> tuple[CostLine | None, list[Note]]:
    notes: list[Note] = []
    if wanted is not None and wanted in lines:
        return lines[wanted], notes
    if wanted is not None:
        names = {"spot": "spot (竞价)", "monthly": "monthly (包月)", "on_demand": "on-demand (按量)"}
        notes.append(Note("billing_unavailable", f"No {names[wanted]} price for this instance; showing the cheapest "
                          "available mode.", f"该实例没有{names[wanted]}价格，改为显示最便宜的计费方式。"))
    usable = [lines[b] for b in ("on_demand", "monthly") if b in lines]
    if not usable:
        return None, notes
    return min(usable, key=lambda c: c.total_cny), notes


def price_notes(line: CostLine, cloud: str, today: date, max_age_days: int) -> list[Note]:
    p = line.price
    link = QUOTE_LINKS.get(cloud, "")
    notes: list[Note] = []
    age = (today - p.dated).days
    if p.stale:
        notes.append(Note("price_stale_sync", f"This price was not returned by the last catalog sync; confirm it at "
                          f"{link}.", f"最近一次目录同步未返回该价格，请在 {link} 确认。"))
    if age > max_age_days:
        when = price_when(p, "en", max_age_days=max_age_days, today=today)
        when_zh = price_when(p, "zh", max_age_days=max_age_days, today=today)
        notes.append(Note("price_old", f"Price: {when} ({age} days old by its content); confirm it at {link}.",
                          f"价格：{when_zh}（按内容已约 {age} 天），请在 {link} 核实最新报价。"))
    if line.newer is not None:
        n = newer_dict(line.newer)
        notes.append(Note("price_newer", f"Price used ¥{p.price_cny:,.2f}/{p.unit}{newer_price_text({'newer': n}, 'en')}.",
                          f"采用价格 ¥{p.price_cny:,.2f}/{'小时' if p.unit == 'hour' else '月'}"
                          f"{newer_price_text({'newer': n}, 'zh')}。", "info"))
    if p.confidence == "estimate":
        how = strip_internal(p.note)
        how_zh = strip_internal(str(getattr(p, "note_zh", "") or ""))  # the derivation in Chinese, when the data has it
        notes.append(Note("price_estimate", f"No published price for this instance: the figure is an estimate"
                          f"{f' ({how})' if how else ''}. Get a quote at {link}.",
                          f"该实例无公开价格，此为估算值{f'（{how_zh}）' if how_zh else ''}。请在 {link} 获取正式报价。"))
    elif p.confidence == "third_party":
        notes.append(Note("price_third_party", f"Price from a {public_source(p.source, p.confidence, 'en')}; "
                          f"confirm at {link}.",
                          f"价格来自{public_source(p.source, p.confidence, 'zh')}，请在 {link} 确认。", "info"))
    if line.billing == "spot":
        notes.append(Note("spot_interruption", "Spot instances can be reclaimed at any time: checkpoint often "
                          "(save_steps) and expect reruns (15 % added to the time).",
                          "竞价实例随时可能被回收：请频繁保存检查点（save_steps），估算已按 15% 额外重跑计入。"))
    return notes


def budget_verdict(line: CostLine, budget: float | None, period: str) -> bool | None:
    if budget is None:
        return None
    spend = line.monthly_cny if period == "month" else line.total_cny
    return spend <= budget


def deadline_verdict(hours: float, deadline: float | None) -> bool | None:
    return None if deadline is None else hours <= deadline


def reference_notes(gpu_id: str, gpu_label: str, rows: tuple[ReferencePrice, ...] | list[ReferencePrice]) -> list[Note]:
    """Other clouds' list price for the same GPU, one comparison line (a reference, never planned on); none when no
    other cloud's price for it is known."""
    en = reference_line(gpu_id, gpu_label, rows, "en")
    return [Note("price_reference", en, reference_line(gpu_id, gpu_label, rows, "zh"), "info")] if en else []

