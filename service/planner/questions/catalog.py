"""Catalog questions answered from the tables (knowledge/catalog): a GPU's or an instance's price under each billing
rule, which instances carry a GPU, what a family is and whether it is still worth renting, the cheapest instance
with >= N GB per card (>= K cards, RDMA, FP8), monthly against on-demand (the break-even hours a month), the spot
discount, what a cloud sells where, two GPUs side by side per GPU-hour and per dense BF16 TFLOPS.

Pure: catalog in, a dict out. Every price keeps its source, its date (or when an undated page was captured) and
its confidence; a type with no public price says so with the cloud's quote link.
"""

from __future__ import annotations

from typing import Any, Literal

from service.catalog.loader import Catalog
from service.catalog.queries import best_price, find_instance, gpu_family, newer_price, resolve_gpu
from service.catalog.schema import GpuSpec, InstanceRow, PriceRow
from service.errors import AdvisorError, InvalidInputError
from service.planner.costing import QUOTE_LINKS, newer_dict

Ask = Literal["price", "instances", "family", "cheapest", "breakeven", "spot", "offer", "side_by_side", "families"]
ASKS: tuple[str, ...] = ("price", "instances", "family", "cheapest", "breakeven", "spot", "offer", "side_by_side")
CLOUDS = ("tencent", "jdcloud")
BILLINGS = ("on_demand", "monthly", "spot")
HOURS_PER_MONTH = 730
WORTH_PER_TFLOPS = 1.6  # a family within this factor of the best ¥ per TFLOPS-hour is still worth renting
SHOWN = 8


def _live(cat: Catalog, clouds: list[str]) -> list[InstanceRow]:
    return [r for r in cat.instances if not r.stale and (not clouds or r.cloud in clouds)]


def _gpu(cat: Catalog, name: str | None) -> GpuSpec | None:
    if not name:
        return None
    try:
        return resolve_gpu(name, cat.gpus)[0]
    except AdvisorError:
        return None


def _price(p: PriceRow | None, inst: InstanceRow, prices: tuple[PriceRow, ...] = ()) -> dict[str, Any] | None:
    if p is None:
        return None
    per_gpu = p.price_cny / inst.gpu_count if p.unit == "hour" else p.price_cny / inst.gpu_count / HOURS_PER_MONTH
    return {"price_cny": p.price_cny, "unit": p.unit, "per_gpu_hour_cny": round(per_gpu, 2),
            "price_low_cny": p.price_low_cny, "source": p.source,
            "as_of": p.as_of.isoformat() if p.as_of else None,
            "captured": p.captured.isoformat() if p.captured else None, "confidence": p.confidence,
            "on_request": p.on_request, "promo": p.promo,
            "content_as_of": p.content_as_of.isoformat() if p.content_as_of else None,
            "content_basis": p.content_basis, "newer": newer_dict(newer_price(p, prices)) if prices else None}


def row(cat: Catalog, inst: InstanceRow) -> dict[str, Any]:
    """An instance with its GPU's specs and its price under each billing rule the catalog has (and, beside each, a
    newer dated price of it where one exists)."""
    g = _gpu(cat, inst.gpu)
    prices = {b: _price(best_price(inst.instance_type, b, cat.prices), inst, cat.prices) for b in BILLINGS}
    return {"cloud": inst.cloud, "instance_type": inst.instance_type, "family": inst.family, "gpu": inst.gpu,
            "gpu_count": inst.gpu_count, "gpu_memory_gib": inst.gpu_memory_gib, "vcpus": inst.vcpus,
            "memory_gib": inst.memory_gib, "network_gbps": inst.network_gbps, "rdma": inst.rdma,
            "regions": inst.regions, "sale_status": inst.sale_status, "source": inst.source,
            "fp8": bool(g and g.supports_fp8), "dense_bf16_tflops": g.dense_16bit_tflops if g else None,
            "prices": {b: p for b, p in prices.items() if p is not None}, "quote_link": QUOTE_LINKS[inst.cloud]}


def _per_gpu_hour(r: dict[str, Any]) -> float | None:
    p = r["prices"].get("on_demand") or r["prices"].get("monthly")
    return None if p is None or p["on_request"] else float(p["per_gpu_hour_cny"])


_CONFIDENCE = {"official": 0, "third_party": 1, "user": 0, "estimate": 2}


def _confidence(r: dict[str, Any]) -> int:
    p = r["prices"].get("on_demand") or r["prices"].get("monthly")
    return 3 if p is None else _CONFIDENCE.get(str(p["confidence"]), 2)


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Priced first, published prices before estimates, then the cheapest per GPU-hour."""
    return sorted(rows, key=lambda r: (_per_gpu_hour(r) is None, _confidence(r), _per_gpu_hour(r) or 0.0,
                                       r["gpu_count"], r["instance_type"]))


def _family_rows(cat: Catalog, family: str, clouds: list[str]) -> list[InstanceRow]:
    fam = family.lower()
    return [r for r in _live(cat, clouds) if r.family.lower() == fam]


def _breakeven(rows: list[dict[str, Any]], cat: Catalog, units: int = 1,
               hours_per_month: float | None = None, total_gpus: int | None = None) -> dict[str, Any]:
    """Monthly against on-demand: the hours a month above which a month's subscription costs less, per instance
    with both prices, and the families' billing rules. With the hours a month they run (`hours_per_month`, 730 for
    around the clock) and the machines they run (`units`), each pair's month under both rules and the saving."""
    pairs = []
    for r in rows:
        od, mo = r["prices"].get("on_demand"), r["prices"].get("monthly")
        if od and mo and not od["on_request"] and not mo["on_request"] and od["unit"] == "hour":
            pair: dict[str, Any] = {"instance_type": r["instance_type"], "cloud": r["cloud"],
                                    "hourly_cny": od["price_cny"], "monthly_cny": mo["price_cny"],
                                    "break_even_hours": round(mo["price_cny"] / od["price_cny"], 1)}
            if hours_per_month is not None:
                if total_gpus and units == 1:  # '8x A100 (HCCPNV4h)': the machines that many cards take
                    units = max(1, -(-total_gpus // int(r["gpu_count"] or 1)))
                hourly_month = round(od["price_cny"] * hours_per_month * units, 2)
                monthly_month = round(mo["price_cny"] * units, 2)
                pair.update(units=units, hours_per_month=hours_per_month, on_demand_month_cny=hourly_month,
                            monthly_month_cny=monthly_month, saving_month_cny=round(hourly_month - monthly_month, 2),
                            winner="monthly" if monthly_month < hourly_month else "on_demand")
            pairs.append(pair)
    families = {r["family"] for r in rows}
    rules = [{"cloud": b.cloud, "family": b.family, "low": b.monthly_per_hourly_low, "high": b.monthly_per_hourly_high,
              "source": b.source} for b in cat.billing_rules if b.family in families or not families]
    return {"pairs": pairs[:SHOWN], "rules": rules[:SHOWN]}


def _spot(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        od, sp = r["prices"].get("on_demand"), r["prices"].get("spot")
        if od and sp and not od["on_request"]:
            out.append({"instance_type": r["instance_type"], "cloud": r["cloud"], "on_demand_cny": od["price_cny"],
                        "spot_cny": sp["price_cny"], "ratio": round(sp["price_cny"] / od["price_cny"], 2),
                        "confidence": sp["confidence"], "source": sp["source"]})
    return out[:SHOWN]


def _side(cat: Catalog, gpus: list[GpuSpec], clouds: list[str]) -> list[dict[str, Any]]:
    """Each GPU's cheapest per-GPU-hour on the clouds, and that per dense BF16 TFLOPS."""
    out = []
    for g in gpus:
        rows = _sorted([row(cat, r) for r in _live(cat, clouds) if gpu_family(r.gpu) == gpu_family(g.id)])
        best = next((r for r in rows if _per_gpu_hour(r) is not None), None)
        per = _per_gpu_hour(best) if best else None
        out.append({"gpu": g.id, "name": g.name, "memory_gib": g.memory_gib, "dense_bf16_tflops": g.dense_16bit_tflops,
                    "fp8": g.supports_fp8, "per_gpu_hour_cny": per, "instance_type": best["instance_type"] if best else None,
                    "cloud": best["cloud"] if best else None,
                    "cny_per_tflops_hour": round(per / g.dense_16bit_tflops, 4) if per and g.dense_16bit_tflops else None,
                    "rented": bool(rows)})
    return out


def _worth(cat: Catalog, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Whether a family is still worth renting: its best ¥ per TFLOPS-hour against the catalog's best."""
    def per_tflops(r: dict[str, Any]) -> float | None:
        per = _per_gpu_hour(r)
        return per / r["dense_bf16_tflops"] if per and r["dense_bf16_tflops"] else None

    allrows = [row(cat, r) for r in _live(cat, [])]
    best = min((v for v in map(per_tflops, allrows) if v), default=None)
    mine = min((v for v in map(per_tflops, rows) if v), default=None)
    status = {r["sale_status"] for r in rows}
    retired = bool(status) and status <= {"legacy", "sold_out"}
    worth = None if mine is None or best is None else (mine <= WORTH_PER_TFLOPS * best and not retired)
    return {"cny_per_tflops_hour": round(mine, 4) if mine else None, "best_cny_per_tflops_hour": round(best, 4)
            if best else None, "worth": worth, "retired": retired}


def _families(cat: Catalog, names: list[str], clouds: list[str], missing: list[str] | None = None
              ) -> list[dict[str, Any]]:
    """Two or more families (or instance types) side by side: their GPUs, cards, RDMA, network, host, the
    cheapest priced GPU-hour and whether each is still worth renting. A name the catalog has no rows for goes to
    `missing` (no public specification): the others are still set out."""
    out = []
    for name in names:
        inst = find_instance(name, cat.instances)
        insts = [inst] if inst is not None else _family_rows(cat, name, clouds)
        if not insts:
            if missing is None:
                raise InvalidInputError(f"families: no instance family or type '{name}' in the catalog.",
                                        "Name them as the cloud writes them, e.g. HCCPNV4h and GT4.")
            missing.append(name)
            continue
        rows = _sorted([row(cat, r) for r in insts])
        priced = [x for x in (_per_gpu_hour(r) for r in rows) if x is not None]
        out.append({"family": name, "cloud": rows[0]["cloud"], "gpus": sorted({r["gpu"] for r in rows}),
                    "gpu_memory_gib": max(r["gpu_memory_gib"] for r in rows),
                    "cards": sorted({float(r["gpu_count"]) for r in rows}), "rdma": any(r["rdma"] for r in rows),
                    "network_gbps": max((r["network_gbps"] or 0) for r in rows) or None,
                    "vcpus": max((r["vcpus"] for r in rows if r["vcpus"] is not None), default=None),
                    "memory_gib": max((r["memory_gib"] for r in rows if r["memory_gib"] is not None), default=None),
                    "per_gpu_hour_cny": min(priced) if priced else None,
                    "worth": _worth(cat, rows).get("worth")})
    return out


def catalog_answer(cat: Catalog, ask: Ask, *, gpu: str | None = None, gpus: list[str] | None = None,
                   instance: str | None = None, family: str | None = None, clouds: list[str] | None = None,
                   billing: str | None = None, min_memory_gb: float | None = None, min_cards: int | None = None,
                   rdma: bool | None = None, fp8: bool | None = None,
                   families: list[str] | None = None, units: int = 1, total_gpus: int | None = None,
                   hours_per_month: float | None = None) -> dict[str, Any]:
    """The answer to one catalog question, from the tables."""
    clouds = [c for c in (clouds or []) if c in CLOUDS]
    if ask == "families":
        if len(families or []) < 2:
            raise InvalidInputError("families: name two instance families to compare.", "E.g. HCCPNV4h and HCCPNV4s.")
        missing: list[str] = []
        lines = _families(cat, list(families or [])[:4], clouds, missing)
        if not lines:
            raise InvalidInputError(f"families: no instance family or type {', '.join(missing)} in the catalog.",
                                    "Name them as the cloud writes them, e.g. HCCPNV4h and GT4.")
        return {"kind": "catalog", "ask": ask, "clouds": clouds, "families": lines, "rows": [], "matched": len(lines),
                "missing": missing,
                "answer": "yes", "quote_links": {c: QUOTE_LINKS[c] for c in (clouds or CLOUDS)}}
    g = _gpu(cat, gpu)
    if gpu and g is None and ask != "offer":
        raise InvalidInputError(f"gpu: the catalog has no GPU '{gpu}'.", "Name a GPU such as A100, H20, L20 or 4090.")
    base: dict[str, Any] = {"kind": "catalog", "ask": ask, "clouds": clouds, "gpu": g.id if g else None,
                            "gpu_family": gpu_family(g.id) if g else None, "instance": instance, "family": family,
                            "billing": billing, "quote_links": {c: QUOTE_LINKS[c] for c in (clouds or CLOUDS)}}
    inst = find_instance(instance, cat.instances) if instance else None
    if instance and inst is None:
        raise InvalidInputError(f"instance: no instance type '{instance}' in the catalog.",
                                "Name one as the cloud writes it, e.g. GT4.4XLARGE96 or p.n1v100.10xlarge.")
    if inst is not None:
        rows = [row(cat, inst)]
        family = family or inst.family
        base["family"] = family
    elif family:
        rows = [row(cat, r) for r in _family_rows(cat, family, clouds)]
        known = next((f for c in clouds if (f := cat.family(c, family)) is not None), None) if clouds \
            else cat.family(None, family)
        if not rows and known is not None:  # a family the cloud's documents name with no size or price published
            return {**base, "family": known.family, "clouds": [known.cloud], "rows": [], "matched": 0,
                    "on_request": [], "answer": "named_only", "family_info": known.model_dump(mode="json")}
        if not rows:
            raise InvalidInputError(f"family: no instance family '{family}' in the catalog.",
                                    "Name one as the cloud writes it, e.g. GN7, GT4, HCCPNV4sn or p.n1v100.")
    else:
        rows = [row(cat, r) for r in _live(cat, clouds) if g is None or gpu_family(r.gpu) == gpu_family(g.id)]
    rows = _sorted(rows)
    if min_cards and ask in ("price", "instances", "breakeven", "spot") and (inst is None):
        exact = [r for r in rows if r["gpu_count"] == min_cards]  # 'gn10xp 8卡那个': the family's 8-card size
        rows = exact or [r for r in rows if r["gpu_count"] >= min_cards] or rows
    if ask == "cheapest":
        rows = [r for r in rows if (min_memory_gb is None or r["gpu_memory_gib"] >= min_memory_gb * 0.93)
                and (min_cards is None or r["gpu_count"] >= min_cards) and (rdma is None or r["rdma"] == rdma)
                and (fp8 is None or r["fp8"] == fp8) and _per_gpu_hour(r) is not None]
        # the cheapest per GPU-hour (a whole machine of K cards: the machine's price), estimates included
        rows.sort(key=lambda r: ((_per_gpu_hour(r) or 0) * (r["gpu_count"] if min_cards else 1), _confidence(r)))
        base.update({"min_memory_gb": min_memory_gb, "min_cards": min_cards, "rdma": rdma, "fp8": fp8})
    if ask == "breakeven":
        base["breakeven"] = _breakeven(rows, cat, units, hours_per_month, total_gpus)
    if ask == "spot":
        base["spot"] = _spot(rows)
    if ask == "side_by_side":
        side = [x for x in (_gpu(cat, n) for n in gpus or []) if x is not None]
        if len(side) < 2:
            raise InvalidInputError("gpus: name two GPUs to set side by side.", "E.g. A10 and L20.")
        base["side"] = _side(cat, side, clouds)
    if ask == "family" or (family and ask in ("price", "instances")):
        base["worth"] = _worth(cat, rows)
    if ask == "offer":
        by_cloud: dict[str, list[str]] = {}
        for r in _live(cat, clouds):
            fam = gpu_family(r.gpu)
            if fam not in by_cloud.setdefault(r.cloud, []):
                by_cloud[r.cloud].append(fam)
        base["cloud_gpus"] = by_cloud
        base["regions"] = sorted({reg.strip() for r in _live(cat, clouds) if g is None or gpu_family(r.gpu) ==
                                  gpu_family(g.id) for reg in (r.regions or "").split(";") if reg.strip()})
    base["rows"] = rows[:SHOWN]
    base["matched"] = len(rows)
    priced = [r for r in rows if _per_gpu_hour(r) is not None]
    base["on_request"] = [r["instance_type"] for r in rows if _per_gpu_hour(r) is None][:SHOWN]
    base["answer"] = "yes" if priced else ("on_request" if rows else "no")
    return base
