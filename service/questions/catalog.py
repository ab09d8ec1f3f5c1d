"""Question type `catalog`: a question answered from the catalog tables, with each price's source and date ('H20一小时
多少钱', 'GN10Xp是啥卡', '哪个实例是L20', 'cheapest instance with 80GB cards', '包月和按量哪个划算', '竞价能便宜多少',
'京东云都有什么卡', 'A10和L20每卡时多少钱'). Engine: service/planner/questions/catalog.py. A follow-up ('那京东云呢',
'按月呢') changes one field; these questions leave no workload behind."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from service.frame import Frame
from service.labels import confidence_label, newer_price_text, per_unit, price_when, unpublished
from service.planner.questions.catalog import ASKS, catalog_answer
from service.planner.questions.facts import FACTS, catalog_fact
from service.planner.serving_types import NewerPrice
from service.questions.base import AnswerBase, Ask, Context, Phrases, QuestionModule
from service.questions.parts import Part
from service.questions.view import gpus_named, is_memory_class

CatalogAsk = Literal["price", "instances", "family", "cheapest", "breakeven", "spot", "offer", "side_by_side", "families",
                     "fact"]
_SPEC_FACTS = ("supports_fp8", "supports_bf16", "supports_flash_attn", "nvlink", "memory", "bandwidth", "tflops",
               "cuda", "rdma", "billing")


class CatalogArgs(BaseModel):
    ask: CatalogAsk = Field(description="price | instances | family | cheapest | breakeven | spot | offer | "
                                        "side_by_side | families (two instance families compared) | fact (a GPU "
                                        "spec or who sells it)")
    gpu: str | None = Field(default=None, max_length=64, description="the GPU asked about: A100, H20, L20, 4090")
    gpus: list[str] = Field(default_factory=list, max_length=4, description="side_by_side: the GPUs to set together")
    instance: str | None = Field(default=None, max_length=64, description="an instance type: GT4.4XLARGE96")
    family: str | None = Field(default=None, max_length=24, description="an instance family: GN7, GT4, HCCPNV4sn")
    families: list[str] = Field(default_factory=list, max_length=4,
                                description="families: the instance families (or types) to compare")
    clouds: list[Literal["tencent", "jdcloud"]] = Field(default_factory=list, description="empty: both clouds")
    billing: Literal["on_demand", "monthly", "spot"] | None = None
    min_memory_gb: float | None = Field(default=None, gt=0, le=1024, description="cheapest: memory per card at least")
    min_cards: int | None = Field(default=None, ge=1, le=64, description="cheapest: cards per instance at least")
    rdma: bool | None = None
    fp8: bool | None = None
    fact: Literal[FACTS] | None = Field(default=None, description="ask=fact: the fact")  # type: ignore[valid-type]
    units: int = Field(default=1, ge=1, le=1000, description="breakeven: the machines they run")
    total_gpus: int | None = Field(default=None, ge=1, le=4096, description="breakeven: the cards they run, when "
                                   "said as cards ('8x A100')")
    hours_per_month: float | None = Field(default=None, gt=0, le=744, description="breakeven: the hours a month "
                                          "they run (730: around the clock)")
    place: str | None = Field(default=None, max_length=24, description="ask=fact regions: the city asked about "
                              "(a lexicon region code)")
    exact: bool = Field(default=False, description="ask=fact: the variant named (A100 80G)")
    question: str | None = None
    also: str | None = None
    asked: str | None = None


class PriceLine(Part):
    price_cny: float
    unit: str
    per_gpu_hour_cny: float
    price_low_cny: float | None = None
    source: str
    as_of: str | None = None
    captured: str | None = None
    confidence: str
    on_request: bool = False
    promo: bool = False
    content_as_of: str | None = None
    content_basis: str | None = None
    newer: NewerPrice | None = None


class CatalogRow(Part):
    cloud: str
    instance_type: str
    family: str
    gpu: str
    gpu_count: float
    gpu_memory_gib: float
    vcpus: int | None = None  # None: not published
    memory_gib: float | None = None  # None: not published
    network_gbps: float | None = None
    rdma: bool
    regions: str = ""
    sale_status: str
    source: str
    fp8: bool = False
    dense_bf16_tflops: float | None = None
    prices: dict[str, PriceLine] = Field(default_factory=dict, description="billing -> its price")
    quote_link: str = ""


class BreakEvenPair(Part):
    instance_type: str
    cloud: str
    hourly_cny: float
    monthly_cny: float
    break_even_hours: float
    units: int | None = None
    hours_per_month: float | None = None
    on_demand_month_cny: float | None = None
    monthly_month_cny: float | None = None
    saving_month_cny: float | None = None
    winner: Literal["monthly", "on_demand"] | None = None


class BillingRuleLine(Part):
    cloud: str
    family: str
    low: float
    high: float
    source: str


class BreakEven(Part):
    pairs: list[BreakEvenPair] = Field(default_factory=list)
    rules: list[BillingRuleLine] = Field(default_factory=list)


class SpotLine(Part):
    instance_type: str
    cloud: str
    on_demand_cny: float
    spot_cny: float
    ratio: float
    confidence: str
    source: str


class SideLine(Part):
    gpu: str
    name: str
    memory_gib: float
    dense_bf16_tflops: float | None = None
    fp8: bool = False
    per_gpu_hour_cny: float | None = None
    instance_type: str | None = None
    cloud: str | None = None
    cny_per_tflops_hour: float | None = None
    rented: bool = False


class Worth(Part):
    cny_per_tflops_hour: float | None = None
    best_cny_per_tflops_hour: float | None = None
    worth: bool | None = None
    retired: bool = False


class FamilyLine(Part):
    family: str
    cloud: str
    gpus: list[str]
    gpu_memory_gib: float
    cards: list[float]
    rdma: bool
    network_gbps: float | None = None
    vcpus: int | None = None  # None: not published
    memory_gib: float | None = None  # None: not published
    per_gpu_hour_cny: float | None = None
    worth: bool | None = None


class CatalogAnswer(AnswerBase):
    kind: Literal["catalog"] = "catalog"
    ask: CatalogAsk
    clouds: list[str] = Field(default_factory=list)
    gpu: str | None = None
    gpu_family: str | None = None
    instance: str | None = None
    family: str | None = None
    billing: str | None = None
    answer: str | None = None
    rows: list[CatalogRow] = Field(default_factory=list)
    matched: int = 0
    on_request: list[str] = Field(default_factory=list)
    quote_links: dict[str, str] = Field(default_factory=dict)
    min_memory_gb: float | None = None
    min_cards: int | None = None
    rdma: bool | None = None
    fp8: bool | None = None
    breakeven: BreakEven | None = None
    missing: list[str] = Field(default_factory=list, description="families named that the catalog has no public "
                               "specification for")
    spot: list[SpotLine] = Field(default_factory=list)
    side: list[SideLine] = Field(default_factory=list)
    families: list[FamilyLine] = Field(default_factory=list)
    worth: Worth | None = None
    cloud_gpus: dict[str, list[str]] = Field(default_factory=dict)
    regions: list[str] = Field(default_factory=list)
    fact: dict[str, Any] | None = Field(default=None, description="ask=fact: the catalog fact (catalog_fact's)")
    family_info: dict[str, Any] | None = Field(default=None, description="a family the cloud's documents name with "
                                               "no size or price published (knowledge/catalog/families.csv)")

    def facts(self) -> dict[str, float]:
        out: dict[str, float] = {}
        top = self.rows[0] if self.rows else None
        if top is not None:
            p = top.prices.get(self.billing or "on_demand") or top.prices.get("on_demand") or top.prices.get("monthly")
            if p is not None:
                out["cny_per_gpu_hour"] = p.per_gpu_hour_cny
                out["cny_per_hour" if p.unit == "hour" else "cny_per_month"] = p.price_cny
            mo = top.prices.get("monthly")
            if mo is not None:
                out["cny_per_month"] = mo.price_cny
            out.update({"count": float(top.gpu_count)})
            if top.vcpus is not None and top.memory_gib is not None:  # not published: no figure
                out.update({"vcpu": float(top.vcpus), "ram_gib": top.memory_gib})
        if self.breakeven and self.breakeven.pairs:
            out["break_even_hours"] = self.breakeven.pairs[0].break_even_hours
        return out


def _run(ctx: Context, args: CatalogArgs) -> CatalogAnswer:
    if args.ask == "fact":
        fact = catalog_fact(ctx.catalog, args.fact or "sells", args.gpu, list(args.clouds), args.exact,
                            args.family, args.place)
        return CatalogAnswer(ask="fact", gpu=args.gpu, clouds=list(args.clouds),
                             answer=(fact or {}).get("answer"), fact=fact)
    out = catalog_answer(ctx.catalog, args.ask, gpu=args.gpu, gpus=args.gpus, instance=args.instance,
                         family=args.family, clouds=list(args.clouds), billing=args.billing,
                         min_memory_gb=args.min_memory_gb, min_cards=args.min_cards, rdma=args.rdma, fp8=args.fp8,
                         families=list(args.families), units=args.units, total_gpus=args.total_gpus,
                         hours_per_month=args.hours_per_month)
    return CatalogAnswer.model_validate(out)


_ASK_OF_FACT = {"spot": "spot", "break_even": "breakeven", "billing": "breakeven", "cheapest": "cheapest",
                "family": "family", "instances": "instances", "price": "price"}


def _ask(f: Frame, gpus: list[str], clouds: list[str], prev: CatalogArgs | None) -> CatalogAsk:
    """The catalog's look-up for the fact the frame asks (service/reader/catalog_asks.py reads it)."""
    fact, families = f.fact, [n for n in f.names if "." not in n]
    if len(f.names) >= 2 and fact in (None, "side_by_side", "price", "family"):
        return "families"  # 'GN10X.18XLARGE320 和 GN10Xp.20XLARGE320 哪个便宜': the two side by side
    if fact == "instances" and not gpus and (f.constraints.needs or f.setup.hardware.gpu_count):
        return "cheapest"  # 'which instances have 8 cards and RDMA, cheapest first'
    if fact == "side_by_side":
        return "families" if len(f.names) >= 2 else "side_by_side" if len(gpus) >= 2 else "price"
    if fact in _ASK_OF_FACT:
        ask = _ASK_OF_FACT[fact]
        if ask == "family" and not families:
            return "price" if f.names else "offer"
        return ask  # type: ignore[return-value]
    if fact in _SPEC_FACTS and (gpus or fact == "rdma") or fact in ("sells", "regions") and (gpus or fact == "regions"):
        return "fact"  # who sells it, where, a spec: the catalog's fact, as the tables state it
    if f.names or gpus:
        return "price"
    if clouds or fact in ("sells", "regions"):
        return "offer"
    return prev.ask if prev is not None else "offer"  # nothing more specific: a follow-up keeps its question


def _route(a: Ask) -> CatalogArgs:
    f = a.frame
    prev: CatalogArgs | None = None
    if a.prev is not None and a.prev.type == "catalog":
        prev = CatalogArgs.model_validate({k: v for k, v in a.prev.args.items() if k in CatalogArgs.model_fields})
    gpus = [g for g in gpus_named(f) if not is_memory_class(g)]
    clouds = [c for c in (*f.constraints.clouds, *(s.hardware.cloud for s in f.setups))
              if c in ("tencent", "jdcloud")]
    clouds = list(dict.fromkeys(clouds))
    ask = _ask(f, gpus, clouds, prev)
    hw = f.setup.hardware
    if f.asked in ("winner", "savings") and (f.compared == "billing" or f.fact in ("break_even", "billing")
                                            or f.constraints.usage_hours_per_month):
        ask = "breakeven"  # 'two GN7 around the clock: monthly saves how much', '300 hours: hourly or monthly?'
    names = [*f.names, *(n for n in (hw.instance,) if n and n not in f.names)]
    instance = next((n for n in names if "." in n), None)  # an instance type: GT4.4XLARGE96, p.n1v100.10xlarge
    family = next((n for n in names if "." not in n), None)
    base = prev.model_dump(exclude_unset=True, exclude={"ask", "families", "gpus"}) if prev is not None else {}
    out: dict[str, object] = {**base, "ask": ask, "question": "catalog", "asked": f.asked}
    out.update({k: v for k, v in (("gpu", gpus[0] if gpus else None), ("instance", instance),
                                   ("family", family)) if v is not None})
    if clouds:
        out["clouds"] = clouds
    if f.constraints.billing:
        out["billing"] = f.constraints.billing
    if ask == "cheapest":
        out.update({"min_memory_gb": f.setup.hardware.gpu_memory_gb, "min_cards": f.setup.hardware.gpu_count,
                    "rdma": True if "rdma" in f.constraints.needs else None,
                    "fp8": True if "fp8" in f.constraints.needs else None})
    elif ask == "families":
        out["families"] = list(f.names[:4])
        out.pop("family", None)
        out.pop("instance", None)
    elif ask == "side_by_side":
        out["gpus"] = gpus[:4]
    elif ask == "fact":
        out.update({"fact": f.fact, "exact": f.setup.hardware.gpu_memory_gb is not None,
                    "place": f.region if f.fact == "regions" else None})
    if ask in ("price", "instances", "breakeven", "spot") and family and hw.gpu_count and not instance:
        out["min_cards"] = hw.gpu_count  # 'gn10xp 8卡那个': the family's size with that many cards
    if ask == "breakeven":
        hours = f.constraints.usage_hours_per_month or (730.0 if f.asked == "savings" else None)
        out.update({"hours_per_month": hours, "units": hw.nodes or 1,
                    "total_gpus": hw.gpu_count if not hw.nodes else None})
    return CatalogArgs.model_validate(out)


def _cloud(c: str, ph: Phrases) -> str:
    return str(ph["cloud_names"].get(c, c))


def _lang(ph: Phrases) -> str:
    return "zh" if ph["hours_unit"] == "小时" else "en"


def _p(p: dict[str, Any], ph: Phrases) -> str:
    """'¥28.64/小时（页面未注明日期 · 抓取于 2026-12-01 · 官方）'."""
    lang = _lang(ph)
    when = price_when(p, lang)
    price = (f"¥{p['price_low_cny']:,.2f}–{p['price_cny']:,.2f}" if p.get("price_low_cny") else f"¥{p['price_cny']:,.2f}")
    return str(ph["cat_price"]).format(price=price, unit=per_unit(p["unit"], lang), date=when,
                                       confidence=confidence_label(p["confidence"], lang)) + newer_price_text(p, lang)


def _row_line(r: dict[str, Any], ph: Phrases) -> str:
    prices = [f"{ph['billing_names'].get(b, b)} {_p(p, ph)}" for b, p in r["prices"].items() if not p["on_request"]]
    refs = [p for p in r["prices"].values() if p["on_request"]]
    shown = str(ph["list_sep"]).join(prices) if prices else str(ph["cat_on_request"]).format(link=r["quote_link"]) + (
        str(ph["cat_price_reference"]).format(price=_p(refs[0], ph)) if refs else "")
    return str(ph["cat_row"]).format(cloud=_cloud(r["cloud"], ph), instance=r["instance_type"],
                                     count=f"{r['gpu_count']:g}", gpu=r["gpu"], mem=f"{r['gpu_memory_gib']:g}",
                                     vcpus=r["vcpus"] if r["vcpus"] is not None else unpublished(_lang(ph)),
                                     ram=f"{r['memory_gib']:g}" if r["memory_gib"] is not None
                                     else unpublished(_lang(ph)),
                                     net=f"{r['network_gbps']:g} Gbps" if r.get("network_gbps") else "—",
                                     rdma=ph["cat_rdma"] if r["rdma"] else "", prices=shown)


def _family_line(f: dict[str, Any], ph: Phrases) -> str:
    cards = "–".join(f"{c:g}" for c in (f["cards"][0], f["cards"][-1])) if len(f["cards"]) > 1 else f"{f['cards'][0]:g}"
    per = f"¥{f['per_gpu_hour_cny']:,.2f}" if f.get("per_gpu_hour_cny") is not None else ph["cat_family_no_price"]
    return str(ph["cat_family_item"]).format(
        family=f["family"], cloud=_cloud(f["cloud"], ph), gpus="/".join(f["gpus"]), mem=f"{f['gpu_memory_gib']:g}",
        cards=cards, rdma=ph["cat_rdma"] if f["rdma"] else "",
        net=f"{f['network_gbps']:g} Gbps" if f.get("network_gbps") else "—",
        vcpus=f["vcpus"] if f["vcpus"] is not None else unpublished(_lang(ph)),
        ram=f"{f['memory_gib']:g}" if f["memory_gib"] is not None else unpublished(_lang(ph)), per=per)


def _first(art: dict[str, Any], ph: Phrases) -> str:
    ask, rows = art["ask"], art.get("rows") or []
    if art.get("family_info"):  # named by the cloud's documents, nothing else published: say so, with the source
        fi = art["family_info"]
        return f"{fi['note_zh'] if _lang(ph) == 'zh' else fi['note']} {fi['source']}"
    subject = art.get("instance") or art.get("family") or art.get("gpu_family") or art.get("gpu") or ""
    where = str(ph["list_sep"]).join(_cloud(c, ph) for c in (art.get("clouds") or ["tencent", "jdcloud"]))
    if not rows and ask not in ("offer", "side_by_side", "families", "fact"):
        return str(ph["cat_none"]).format(what=subject or where, cloud=where)
    top = rows[0] if rows else None
    if ask == "fact":
        return ""
    if ask == "offer":
        parts = [str(ph["cat_offer"]).format(cloud=_cloud(c, ph), gpus=str(ph["list_sep"]).join(g))
                 for c, g in (art.get("cloud_gpus") or {}).items()]
        return "\n".join(parts)
    if ask == "families":
        lines = str(ph["cat_family_sep"]).join(_family_line(f, ph) for f in art.get("families") or [])
        return str(ph["cat_families"]).format(items=lines)
    if ask == "side_by_side":
        items = []
        for s in art.get("side") or []:
            per = f"¥{s['per_gpu_hour_cny']:,.2f}" if s.get("per_gpu_hour_cny") else ph["cat_not_priced"]
            tf = f"¥{s['cny_per_tflops_hour']:.4f}" if s.get("cny_per_tflops_hour") else "—"
            items.append(str(ph["cat_side_item"]).format(gpu=s["name"], per=per, tflops=f"{s['dense_bf16_tflops']:g}"
                                                         if s.get("dense_bf16_tflops") else "—", per_tflops=tf))
        return str(ph["cat_side"]).format(items="；".join(items) if _lang(ph) == "zh" else "; ".join(items))
    if ask == "breakeven":
        be = art.get("breakeven") or {}
        pair = (be.get("pairs") or [None])[0]
        if pair is None:
            return str(ph["cat_breakeven_none"]).format(what=subject or where)
        h = pair["break_even_hours"]
        return str(ph["cat_breakeven"]).format(instance=pair["instance_type"], hours=f"{h:g}", days=f"{h / 24:.1f}",
                                               hourly=f"{pair['hourly_cny']:,.2f}", monthly=f"{pair['monthly_cny']:,.0f}")
    if ask == "spot":
        spots = art.get("spot") or []
        if not spots:
            return str(ph["cat_spot_none"]).format(what=subject or where)
        s = spots[0]
        key = "cat_spot_estimate" if s["confidence"] == "estimate" else "cat_spot"
        return str(ph[key]).format(instance=s["instance_type"], spot=f"{s['spot_cny']:,.2f}",
                                   od=f"{s['on_demand_cny']:,.2f}", pct=round(100 * s["ratio"]))
    assert top is not None
    if ask == "cheapest":  # the price under the billing asked ('包月多少'), else the first the table gives
        p = top["prices"].get(art.get("billing") or "") or next(iter(top["prices"].values()))
        return str(ph["cat_cheapest"]).format(instance=top["instance_type"], cloud=_cloud(top["cloud"], ph),
                                              count=f"{top['gpu_count']:g}", gpu=top["gpu"],
                                              mem=f"{top['gpu_memory_gib']:g}", price=_p(p, ph),
                                              per=f"{p['per_gpu_hour_cny']:,.2f}")
    if ask == "family":
        fam = top["family"]
        gpus = sorted({r["gpu"] for r in rows})
        counts = sorted({r["gpu_count"] for r in rows})
        worth = art.get("worth") or {}
        verdict = (ph["cat_worth_retired"] if worth.get("retired") else ph["cat_worth_yes"] if worth.get("worth")
                   else ph["cat_worth_no"] if worth.get("worth") is False else "")
        return str(ph["cat_family"]).format(family=fam, cloud=_cloud(top["cloud"], ph), gpus="/".join(gpus),
                                            counts="–".join(f"{c:g}" for c in (counts[0], counts[-1]))
                                            if len(counts) > 1 else f"{counts[0]:g}", verdict=verdict)
    if ask == "instances":
        names = str(ph["list_sep"]).join(f"{r['instance_type']}（{r['gpu_count']:g}×）" if _lang(ph) == "zh" else
                                          f"{r['instance_type']} ({r['gpu_count']:g}x)" for r in rows[:6])
        return str(ph["cat_instances"]).format(gpu=subject, cloud=where, instances=names, n=art.get("matched", 0))
    p = top["prices"].get(art.get("billing") or "") or top["prices"].get("on_demand") or top["prices"].get("monthly")
    if p is None or p["on_request"]:
        head = str(ph["cat_price_on_request"]).format(instance=top["instance_type"], cloud=_cloud(top["cloud"], ph),
                                                      link=top["quote_link"])
        return head + (str(ph["cat_price_reference"]).format(price=_p(p, ph)) if p is not None else "")
    return str(ph["cat_price_first"]).format(instance=top["instance_type"], cloud=_cloud(top["cloud"], ph),
                                             count=f"{top['gpu_count']:g}", gpu=top["gpu"],
                                             billing=ph["billing_names"].get(art.get("billing") or "on_demand", ""),
                                             price=_p(p, ph), per=f"{p['per_gpu_hour_cny']:,.2f}")


def _render(answer: CatalogAnswer, ph: Phrases) -> str:
    art = answer.public()
    if answer.ask == "fact":
        from service.questions.knowledge import render_fact

        return render_fact(art["fact"], ph) if art.get("fact") else str(ph["cat_none"]).format(
            what=art.get("gpu") or "", cloud="")
    lines = [_first(art, ph)]
    rows = art.get("rows") or []
    if rows and answer.ask not in ("offer", "side_by_side"):
        lines += ["", *[f"- {_row_line(r, ph)}" for r in rows[:6]]]
        if art.get("matched", 0) > 6:
            lines.append(str(ph["cat_more"]).format(n=art["matched"] - 6))
    if answer.ask == "spot" or (answer.ask == "price" and answer.billing == "spot"):
        lines += ["", str(ph["cat_spot_risk"])]
    if answer.ask == "breakeven" and art.get("breakeven", {}).get("rules"):
        r = art["breakeven"]["rules"][0]
        ratio = f"{r['low']:g}" if r["low"] == r["high"] else f"{r['low']:g}–{r['high']:g}"
        lines += ["", str(ph["cat_rule"]).format(cloud=_cloud(r["cloud"], ph), family=r["family"], ratio=ratio)]
    if art.get("on_request"):
        links = str(ph["list_sep"]).join(sorted(set((art.get("quote_links") or {}).values())))
        lines += ["", str(ph["cat_on_request_list"]).format(instances=str(ph["list_sep"]).join(art["on_request"][:6]),
                                                            link=links)]
    return "\n".join(lines)


def _summary(o: CatalogAnswer) -> str:
    head = f"{o.ask}: {o.answer}; {o.matched} rows"
    rows = "; ".join(f"{r.cloud} {r.instance_type} ({r.gpu_count:g}x {r.gpu}): " + ", ".join(
        f"{b} ¥{p.price_cny:g}/{p.unit} ({price_when(p, 'en')}, {p.confidence})"
        for b, p in r.prices.items()) for r in o.rows[:5])
    return f"{head}. {rows}"[:2000]


MODULE = QuestionModule(
    name="catalog", tool="catalog", title="Answer from the catalog tables", args=CatalogArgs, answer=CatalogAnswer,
    run=_run, route=_route, render=_render, summary=_summary, follows=True, workload=False,
    frames=(("none", "price"), ("none", "fact"), ("train", "price"), ("serve", "price")),
    description="A question about the catalog itself, answered from its tables with each price's source and date: "
                "the price of a GPU or an instance under each billing rule (on-demand, monthly, spot, per GPU-hour), "
                "which instances carry a GPU (cards, vCPU, RAM, network, RDMA), what an instance family is and "
                "whether it is still worth renting, the cheapest instance with >= N GB per card (>= K cards, RDMA, "
                "FP8), monthly against on-demand (the break-even hours a month), the spot discount and its risk, "
                "what a cloud sells and where, two GPUs side by side per GPU-hour and per dense BF16 TFLOPS. "
                f"`ask` is one of {', '.join(ASKS)} or fact. Not for sizing a job: use plan or the question tools.")
