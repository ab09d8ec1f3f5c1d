"""Merge rows fetched from the clouds' APIs into the catalog (pure: rows in, rows out).

Rules:
- An API row replaces the catalog row with the same key: (cloud, instance_type) for instances,
  (instance_type, billing, region) for prices.
- An API price also supersedes older non-API prices for the same instance and billing in other regions
  (the shipped region-less estimates): they are kept, marked stale, so `best_price` prefers the API row.
- A row the API no longer returns is kept but marked stale when the sync covered it: its cloud synced, every
  region it lists answered, and a row that names no known region only on a complete sync (all default regions,
  none failed). Rows the API returned but we skipped as malformed are never marked stale.
- On an instance the API still lists, fields the API is silent on (local disk, CPU model, network) keep their
  catalog values; a curated sale status (main, allowlist, invite_only, limited) survives an API "on sale";
  zones outside the synced regions are kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from service.catalog.fetchers.regions import region_of, split_regions
from service.catalog.schema import Billing, Cloud, InstanceRow, PriceRow, SaleStatus

InstanceKey = tuple[str, str]
PriceKey = tuple[str, str, str]
_CURATED: frozenset[SaleStatus] = frozenset({"main", "allowlist", "invite_only", "limited"})


def instance_key(r: InstanceRow) -> InstanceKey:
    return (r.cloud, r.instance_type)


def price_key(p: PriceRow) -> PriceKey:
    return (p.instance_type, p.billing, p.region)


@dataclass(frozen=True)
class SyncScope:
    """What one sync covered, per cloud."""

    regions: Mapping[Cloud, frozenset[str]]  # regions that answered
    complete: Mapping[Cloud, bool] = field(default_factory=dict)  # every default region asked and answered
    priced: Mapping[Cloud, frozenset[Billing]] = field(default_factory=dict)  # billing modes the API priced
    seen: frozenset[InstanceKey] = frozenset()  # returned but skipped as malformed: never stale

    def covers(self, cloud: Cloud, regions_text: str) -> bool:
        synced = self.regions.get(cloud)
        if synced is None:
            return False
        known = [region_of(cloud, e) for e in split_regions(regions_text)]
        if any(r is not None and r not in synced for r in known):
            return False
        if not known or any(r is None for r in known):
            return self.complete.get(cloud, False)
        return True


@dataclass(frozen=True)
class Merged:
    instances: list[InstanceRow]
    prices: list[PriceRow]
    stale_price_reasons: dict[PriceKey, str]


def combine_instances(rows: Iterable[InstanceRow]) -> list[InstanceRow]:
    """One row per (cloud, instance_type) from per-region rows: zones joined, sold out only if sold out everywhere."""
    out: dict[InstanceKey, InstanceRow] = {}
    for r in rows:
        prev = out.get(instance_key(r))
        if prev is None:
            out[instance_key(r)] = r
            continue
        zones = sorted(set(split_regions(prev.regions)) | set(split_regions(r.regions)))
        if prev.sale_status == "sold_out":
            status = r.sale_status
        elif r.sale_status == "sold_out":
            status = prev.sale_status
        else:
            status = prev.sale_status if prev.sale_status == r.sale_status else "on_sale"
        out[instance_key(r)] = prev.model_copy(update={"regions": ";".join(zones), "sale_status": status})
    return list(out.values())


def _supersede(old: InstanceRow, new: InstanceRow, scope: SyncScope) -> InstanceRow:
    synced = scope.regions.get(new.cloud, frozenset())
    elsewhere = [
        e for e in split_regions(old.regions)
        if (r := region_of(old.cloud, e)) is not None and r not in synced
    ]
    status = new.sale_status
    if new.sale_status == "sold_out" and elsewhere and old.sale_status != "sold_out":
        status = old.sale_status  # still sold in regions this sync did not ask about
    elif new.sale_status == "on_sale" and old.sale_status in _CURATED:
        status = old.sale_status
    return new.model_copy(
        update={
            "regions": ";".join([*split_regions(new.regions), *elsewhere]),
            "sale_status": status,
            "local_disk": new.local_disk or old.local_disk,
            "cpu_model": new.cpu_model or old.cpu_model,
            "network_gbps": new.network_gbps if new.network_gbps is not None else old.network_gbps,
            "rdma": new.rdma or old.rdma,
        }
    )


def merge_instances(base: Sequence[InstanceRow], fresh: Sequence[InstanceRow], scope: SyncScope) -> list[InstanceRow]:
    by_key = {instance_key(r): r for r in fresh}
    merged: list[InstanceRow] = []
    for old in base:
        key = instance_key(old)
        new = by_key.pop(key, None)
        if new is not None:
            merged.append(_supersede(old, new, scope))
        elif not old.stale and key not in scope.seen and scope.covers(old.cloud, old.regions):
            merged.append(old.model_copy(update={"stale": True}))
        else:
            merged.append(old)
    merged.extend(by_key.values())
    return merged


def _price_in_scope(p: PriceRow, cloud: Cloud | None, scope: SyncScope) -> bool:
    if cloud is None or p.billing not in scope.priced.get(cloud, frozenset()):
        return False
    synced = scope.regions.get(cloud, frozenset())
    return p.region in synced if p.region else scope.complete.get(cloud, False)


def merge_prices(
    base: Sequence[PriceRow], fresh: Sequence[PriceRow], instances: Sequence[InstanceRow], scope: SyncScope
) -> tuple[list[PriceRow], dict[PriceKey, str]]:
    """(merged prices, reason per price newly marked stale). `instances`: the merged instance rows."""
    by_key = {price_key(p): p for p in fresh}
    fresh_pairs: dict[tuple[str, str], PriceRow] = {}
    for p in fresh:
        fresh_pairs.setdefault((p.instance_type, p.billing), p)
    cloud_of: dict[str, Cloud] = {r.instance_type: r.cloud for r in instances}
    skipped_types = {itype for _, itype in scope.seen}
    merged: list[PriceRow] = []
    reasons: dict[PriceKey, str] = {}
    for old in base:
        key = price_key(old)
        new = by_key.pop(key, None)
        by_api = fresh_pairs.get((old.instance_type, old.billing))
        if new is not None:
            merged.append(new)
        elif old.stale or old.instance_type in skipped_types:
            merged.append(old)
        elif by_api is not None and not old.source.startswith("api:") and old.dated <= by_api.dated:
            reasons[key] = f"superseded by {by_api.source} ({by_api.region}, {by_api.dated})"
            merged.append(old.model_copy(update={"stale": True}))
        elif _price_in_scope(old, cloud_of.get(old.instance_type), scope):
            reasons[key] = f"not returned by the sync of {old.region or 'all default regions'}"
            merged.append(old.model_copy(update={"stale": True}))
        else:
            merged.append(old)
    merged.extend(by_key.values())
    return merged, reasons


def merge(
    base_instances: Sequence[InstanceRow],
    base_prices: Sequence[PriceRow],
    fresh_instances: Sequence[InstanceRow],
    fresh_prices: Sequence[PriceRow],
    scope: SyncScope,
) -> Merged:
    instances = merge_instances(base_instances, combine_instances(fresh_instances), scope)
    prices, reasons = merge_prices(base_prices, fresh_prices, instances, scope)
    return Merged(instances, prices, reasons)

