"""What a sync changed, as data (for --json) and as rich tables (for people)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

from service.catalog.fetchers.base import Skipped
from service.catalog.queries import best_price
from service.catalog.schema import InstanceRow, PriceRow
from service.catalog.sync_merge import PriceKey, instance_key, price_key


@dataclass(frozen=True)
class RegionFailure:
    cloud: str
    region: str
    error: str


@dataclass(frozen=True)
class PriceChange:
    instance_type: str
    billing: str
    region: str
    unit: str
    old_cny: float
    new_cny: float
    old_region: str = ""  # the old price's region: another one ('' = region-less) when the API row superseded it

    @property
    def change_pct(self) -> float:
        return round((self.new_cny - self.old_cny) / self.old_cny * 100, 1)


@dataclass(frozen=True)
class SyncDiff:
    synced: Mapping[str, tuple[str, ...]]  # cloud → regions that answered
    new_instances: tuple[InstanceRow, ...] = ()
    stale_instances: tuple[InstanceRow, ...] = ()
    newly_sold_out: tuple[InstanceRow, ...] = ()
    price_changes: tuple[PriceChange, ...] = ()
    new_prices: tuple[PriceRow, ...] = ()
    stale_prices: tuple[tuple[PriceRow, str], ...] = ()
    skipped: tuple[Skipped, ...] = ()
    failures: tuple[RegionFailure, ...] = ()
    notes: tuple[str, ...] = ()
    written: tuple[str, ...] = field(default=())  # files written; empty on a dry run

    @property
    def has_changes(self) -> bool:
        return bool(self.new_instances or self.stale_instances or self.newly_sold_out or self.price_changes
                    or self.new_prices or self.stale_prices)


def compute_diff(
    base_instances: Sequence[InstanceRow],
    merged_instances: Sequence[InstanceRow],
    base_prices: Sequence[PriceRow],
    merged_prices: Sequence[PriceRow],
    fresh_prices: Sequence[PriceRow],
    stale_reasons: Mapping[PriceKey, str],
    *,
    synced: Mapping[str, tuple[str, ...]],
    skipped: Sequence[Skipped] = (),
    failures: Sequence[RegionFailure] = (),
    notes: Sequence[str] = (),
) -> SyncDiff:
    """Compare the catalog before and after a merge. fresh_prices: the rows the API returned."""
    old_inst = {instance_key(r): r for r in base_instances}
    new_inst: list[InstanceRow] = []
    stale_inst: list[InstanceRow] = []
    sold_out: list[InstanceRow] = []
    for r in merged_instances:
        old = old_inst.get(instance_key(r))
        if old is None or (old.stale and not r.stale):
            new_inst.append(r)
        elif r.stale and not old.stale:
            stale_inst.append(r)
        if old is not None and r.sale_status == "sold_out" and old.sale_status != "sold_out" and not r.stale:
            sold_out.append(r)
    old_price = {price_key(p): p for p in base_prices}
    changes: list[PriceChange] = []
    added: list[PriceRow] = []
    for p in fresh_prices:
        same = old_price.get(price_key(p))
        before = same or best_price(p.instance_type, p.billing, [q for q in base_prices if q.region == ""])
        if before is None:
            added.append(p)
        elif before.price_cny != p.price_cny and before.unit == p.unit:
            changes.append(PriceChange(p.instance_type, p.billing, p.region, p.unit, before.price_cny, p.price_cny,
                                       before.region))
    merged_by_key = {price_key(p): p for p in merged_prices}
    stale = [(merged_by_key[k], why) for k, why in stale_reasons.items() if k in merged_by_key]
    return SyncDiff(
        synced=dict(synced),
        new_instances=tuple(new_inst),
        stale_instances=tuple(stale_inst),
        newly_sold_out=tuple(sold_out),
        price_changes=tuple(changes),
        new_prices=tuple(added),
        stale_prices=tuple(stale),
        skipped=tuple(skipped),
        failures=tuple(failures),
        notes=tuple(notes),
    )


def diff_to_json(diff: SyncDiff) -> dict[str, Any]:
    def inst(r: InstanceRow) -> dict[str, Any]:
        return {"cloud": r.cloud, "instance_type": r.instance_type, "gpu": r.gpu, "gpu_count": r.gpu_count,
                "regions": r.regions, "sale_status": r.sale_status}

    def price(p: PriceRow) -> dict[str, Any]:
        return {"instance_type": p.instance_type, "billing": p.billing, "region": p.region,
                "price_cny": p.price_cny, "unit": p.unit}

    return {
        "synced": {k: list(v) for k, v in diff.synced.items()},
        "new_instances": [inst(r) for r in diff.new_instances],
        "removed_instances": [inst(r) for r in diff.stale_instances],
        "newly_sold_out": [inst(r) for r in diff.newly_sold_out],
        "price_changes": [
            {"instance_type": c.instance_type, "billing": c.billing, "region": c.region, "unit": c.unit,
             "old_cny": c.old_cny, "new_cny": c.new_cny, "change_pct": c.change_pct, "old_region": c.old_region}
            for c in diff.price_changes
        ],
        "new_prices": [price(p) for p in diff.new_prices],
        "stale_prices": [{**price(p), "reason": why} for p, why in diff.stale_prices],
        "skipped": [{"cloud": s.cloud, "region": s.region, "instance_type": s.instance_type, "reason": s.reason}
                    for s in diff.skipped],
        "failed_regions": [{"cloud": f.cloud, "region": f.region, "error": f.error} for f in diff.failures],
        "notes": list(diff.notes),
        "written": list(diff.written),
    }


def _table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
    t = Table(title=f"{title} ({len(rows)})", title_justify="left", show_edge=False, pad_edge=False)
    for c in columns:
        t.add_column(c)
    for r in rows:
        t.add_row(*r)
    return t


def render_diff(diff: SyncDiff, console: Console) -> None:
    synced = ", ".join(f"{c} ({', '.join(r) or 'no region'})" for c, r in diff.synced.items())
    console.print(f"[bold]Catalog sync[/bold]: {synced}")
    if diff.new_instances:
        console.print(_table("New instance types", ["cloud", "instance type", "GPU", "zones", "status"], [
            [r.cloud, r.instance_type, f"{r.gpu_count:g} × {r.gpu}", r.regions, r.sale_status]
            for r in diff.new_instances]))
    if diff.stale_instances:
        console.print(_table("No longer returned (kept, marked stale)", ["cloud", "instance type", "zones"], [
            [r.cloud, r.instance_type, r.regions] for r in diff.stale_instances]))
    if diff.price_changes:
        console.print(_table("Price changes", ["instance type", "billing", "region", "old ¥", "new ¥", "change"], [
            [c.instance_type, c.billing, c.region,
             f"{c.old_cny:g}" + ("" if c.old_region == c.region else f" ({c.old_region or 'region-less'})"),
             f"{c.new_cny:g}/{c.unit}", f"{c.change_pct:+.1f}%"] for c in diff.price_changes]))
    if diff.new_prices:
        console.print(_table("New prices", ["instance type", "billing", "region", "¥"], [
            [p.instance_type, p.billing, p.region, f"{p.price_cny:g}/{p.unit}"] for p in diff.new_prices]))
    if diff.stale_prices:
        console.print(_table("Prices marked stale", ["instance type", "billing", "region", "¥", "why"], [
            [p.instance_type, p.billing, p.region or "(any)", f"{p.price_cny:g}/{p.unit}", why]
            for p, why in diff.stale_prices]))
    if diff.newly_sold_out:
        console.print(_table("Newly sold out", ["cloud", "instance type", "zones"], [
            [r.cloud, r.instance_type, r.regions] for r in diff.newly_sold_out]))
    if diff.skipped:
        console.print(_table("Skipped rows (malformed or unmapped)", ["cloud", "region", "instance type", "reason"], [
            [s.cloud, s.region, s.instance_type, s.reason] for s in diff.skipped]))
    if diff.failures:
        console.print(_table("[red]Failed regions[/red]", ["cloud", "region", "error"], [
            [f.cloud, f.region, f.error] for f in diff.failures]))
    for note in diff.notes:
        console.print(f"[yellow]note[/yellow]: {note}")
    if not diff.has_changes:
        console.print("No catalog changes.")
    if diff.written:
        console.print("Wrote " + ", ".join(diff.written))
    else:
        console.print("Nothing written.")
