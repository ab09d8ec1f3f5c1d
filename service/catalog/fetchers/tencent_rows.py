"""Tencent CVM API responses → catalog rows (pure; no client).

Input: the `InstanceTypeQuotaSet` of DescribeZoneInstanceConfigInfos per charge type, and the
`InstanceTypeConfigSet` of DescribeInstanceTypeConfigs, for one region (field tables: cloud-apis.md §1.2, §1.4).
Price fields read (§1.2 "How to read the price"): POSTPAID_BY_HOUR `UnitPrice` (list, first tier),
PREPAID `OriginalPrice` (1-month list total), SPOTPAID `UnitPriceDiscount` (the spot price). Zero means "not
applicable" and gives no row. The account's discounted price and the hour tiers go in the note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from pydantic import ValidationError

from service.catalog.fetchers.base import RegionResult, Skipped
from service.catalog.fetchers.gpu_names import resolve_gpu
from service.catalog.fetchers.regions import tencent_region_of_zone
from service.catalog.schema import Billing, InstanceRow, PriceRow

INSTANCE_SOURCE = "api:DescribeZoneInstanceConfigInfos"
PRICE_SOURCE = "api:DescribeZoneInstanceConfigInfos"
CHARGE_TYPES: tuple[tuple[str, Billing], ...] = (
    ("POSTPAID_BY_HOUR", "on_demand"),
    ("PREPAID", "monthly"),
    ("SPOTPAID", "spot"),
)


class _Malformed(ValueError):
    pass


def _num(value: Any) -> float:
    """A positive number, or 0 for anything else (null, text, negative)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value) if value > 0 else 0.0


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _validation_text(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors())


Observation = tuple[str, Mapping[str, Any]]  # (charge type, InstanceTypeQuotaItem)


def _instance_row(
    itype: str, obs: Sequence[Observation], config: Mapping[str, Any], today: date, hints: Mapping[str, str]
) -> InstanceRow:
    first = next((raw for charge, raw in obs if charge != "SPOTPAID"), obs[0][1])
    gpu_count = _num(first.get("GpuCount")) or _num(first.get("Gpu"))
    family = _text(first.get("InstanceFamily")) or itype.split(".")[0]
    found = resolve_gpu(
        [_text(config.get("GpuType")), _text(first.get("Remark"))],
        _num(config.get("GpuMemory")) or None,
        hints.get(itype) or hints.get(family),
    )
    if found.gpu_id is None:
        raise _Malformed(found.reason)
    zones = sorted({_text(raw.get("Zone")) for _, raw in obs})
    # Sale status from the charge types one can buy outright; spot availability says less about stock.
    buyable = [raw for charge, raw in obs if charge != "SPOTPAID"] or [raw for _, raw in obs]
    sold_out = all(_text(raw.get("Status")) == "SOLD_OUT" for raw in buyable)
    cpu_model = " ".join(x for x in (_text(first.get("CpuType")), _text(first.get("Frequency"))) if x)
    try:
        return InstanceRow(
            cloud="tencent",
            family=family,
            instance_type=itype,
            gpu=found.gpu_id,
            gpu_count=gpu_count,
            gpu_memory_gib=round(found.card_memory_gib * min(gpu_count, 1.0), 2),
            vcpus=int(_num(first.get("Cpu"))),
            memory_gib=_num(first.get("Memory")),
            network_gbps=_num(first.get("InstanceBandwidth")) or None,
            rdma=family.upper().startswith("HCC"),
            cpu_model=cpu_model,
            regions=";".join(zones),
            sale_status="sold_out" if sold_out else "on_sale",
            source=INSTANCE_SOURCE,
            as_of=today,
            confidence="official",
        )
    except ValidationError as exc:
        raise _Malformed(_validation_text(exc)) from exc


def _fmt(x: float) -> str:
    return f"{x:.4f}".rstrip("0").rstrip(".")


def _price_value(charge: str, price: Mapping[str, Any]) -> tuple[float, list[str]]:
    """(catalog price, note parts) for one zone's ItemPrice."""
    if charge == "POSTPAID_BY_HOUR":
        notes = ["list price (UnitPrice)"]
        if (d := _num(price.get("UnitPriceDiscount"))) and d != _num(price.get("UnitPrice")):
            notes.append(f"account price {_fmt(d)} (UnitPriceDiscount)")
        if (s2 := _num(price.get("UnitPriceSecondStep"))) or _num(price.get("UnitPriceThirdStep")):
            notes.append(f"tiers: 96-360 h {_fmt(s2)}, >360 h {_fmt(_num(price.get('UnitPriceThirdStep')))}")
        return _num(price.get("UnitPrice")), notes
    if charge == "PREPAID":
        notes = ["1-month list total (OriginalPrice)"]
        if (d := _num(price.get("DiscountPrice"))) and d != _num(price.get("OriginalPrice")):
            notes.append(f"account price {_fmt(d)} (DiscountPrice)")
        return _num(price.get("OriginalPrice")), notes
    notes = ["spot price at fetch time (UnitPriceDiscount)"]
    if list_price := _num(price.get("UnitPrice")):
        notes.append(f"on-demand list {_fmt(list_price)}")
    return _num(price.get("UnitPriceDiscount")), notes


def _price_rows(itype: str, obs: Sequence[Observation], region: str, today: date) -> list[PriceRow]:
    rows: list[PriceRow] = []
    for charge, billing in CHARGE_TYPES:
        quotes: list[tuple[float, str, list[str], bool]] = []
        for ch, raw in obs:
            price = raw.get("Price")
            if ch != charge or not isinstance(price, Mapping):
                continue
            value, notes = _price_value(charge, price)
            if value > 0:
                quotes.append((value, _text(raw.get("Zone")), notes, _text(raw.get("Status")) != "SOLD_OUT"))
        selling = [q for q in quotes if q[3]] or quotes
        if not selling:
            continue
        value, zone, notes, _ = min(selling, key=lambda q: (q[0], q[1]))
        high = max(q[0] for q in selling)
        notes = [*notes, f"zone {zone}" if high == value else f"lowest of zones ({_fmt(value)}-{_fmt(high)}), {zone}"]
        rows.append(
            PriceRow(
                instance_type=itype,
                billing=billing,
                price_cny=value,
                unit="month" if billing == "monthly" else "hour",
                region=region,
                source=PRICE_SOURCE,
                as_of=today,
                confidence="official",
                note="; ".join(notes),
            )
        )
    return rows


def parse_region(
    region: str,
    quota_sets: Mapping[str, Sequence[Any]],
    configs: Sequence[Any],
    today: date,
    gpu_hints: Mapping[str, str],
    notes: Sequence[str] = (),
) -> RegionResult:
    """Rows for the GPU instance types (Gpu or GpuCount > 0) of one region. gpu_hints: our GPU id per
    instance type or family in the current catalog, for API strings that leave the GPU ambiguous."""
    config_by_type = {
        _text(c.get("InstanceType")): c for c in configs if isinstance(c, Mapping) and _text(c.get("InstanceType"))
    }
    skipped: dict[tuple[str, str], Skipped] = {}
    grouped: dict[str, list[Observation]] = {}
    for charge, rows in quota_sets.items():
        for raw in rows:
            if not isinstance(raw, Mapping):
                skipped[("?", "row is not an object")] = Skipped("tencent", region, "?", "row is not an object")
                continue
            itype = _text(raw.get("InstanceType"))
            if not (_num(raw.get("GpuCount")) or _num(raw.get("Gpu"))):
                continue  # not a GPU type
            zone = _text(raw.get("Zone"))
            reason = ""
            if not itype:
                reason = "no InstanceType"
            elif tencent_region_of_zone(zone) != region:
                reason = f"zone {zone!r} is not in {region}"
            elif raw.get("InstanceChargeType") not in (None, charge):
                reason = f"charge type {raw.get('InstanceChargeType')!r} in a {charge} answer"
            if reason:
                skipped[(itype or "?", reason)] = Skipped("tencent", region, itype or "?", reason)
                continue
            grouped.setdefault(itype, []).append((charge, raw))
    instances: list[InstanceRow] = []
    prices: list[PriceRow] = []
    for itype in sorted(grouped):
        obs = grouped[itype]
        try:
            row = _instance_row(itype, obs, config_by_type.get(itype, {}), today, gpu_hints)
            row_prices = _price_rows(itype, obs, region, today)
        except (_Malformed, ValidationError) as exc:
            reason = _validation_text(exc) if isinstance(exc, ValidationError) else str(exc)
            skipped[(itype, reason)] = Skipped("tencent", region, itype, reason)
            continue
        instances.append(row)
        prices.extend(row_prices)
    return RegionResult("tencent", region, tuple(instances), tuple(prices), tuple(skipped.values()), tuple(notes))
