"""`catalog sync`: ask the clouds' APIs, merge the answers into the catalog, write it, report what changed.

Three steps, each callable alone: `load_base` reads the catalog the sync starts from, `fetch_all` drives the
fetchers region by region (one failing region does not stop the others; bad credentials stop everything), and
`apply_sync` merges (rules in sync_merge), diffs (sync_diff) and writes. By default the result goes to the
overlay (data_dir/catalog/{instances,prices}.csv, only rows that differ from the shipped files); with
write_knowledge it replaces knowledge/catalog/{instances,prices}.csv.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from service.catalog.fetchers.base import RegionFetcher, RegionFetchError, RegionResult, Skipped
from service.catalog.loader import GPUS_FILE, INSTANCES_FILE, PRICES_FILE, read_csv_rows, read_yaml_rows
from service.catalog.schema import Billing, Cloud, GpuSpec, InstanceRow, PriceRow
from service.catalog.sync_diff import RegionFailure, SyncDiff, compute_diff
from service.catalog.sync_merge import SyncScope, instance_key, merge, price_key
from service.errors import CatalogError

T = TypeVar("T", bound=BaseModel)
OVERLAY_INSTANCES = "instances.csv"
OVERLAY_PRICES = "prices.csv"


class SyncProgress(Protocol):
    def region_started(self, cloud: str, region: str, calls: int) -> None: ...
    def call_done(self) -> None: ...
    def region_done(self, ok: bool) -> None: ...


class _NoProgress:
    def region_started(self, cloud: str, region: str, calls: int) -> None:
        return None

    def call_done(self) -> None:
        return None

    def region_done(self, ok: bool) -> None:
        return None


@dataclass(frozen=True)
class SyncTarget:
    knowledge_dir: Path
    overlay_dir: Path
    write_knowledge: bool = False
    dry_run: bool = False


@dataclass(frozen=True)
class Base:
    """The catalog a sync starts from: shipped rows, and the rows to merge into (shipped ⊕ overlay)."""

    shipped_instances: list[InstanceRow]
    shipped_prices: list[PriceRow]
    instances: list[InstanceRow]
    prices: list[PriceRow]
    gpu_ids: frozenset[str]

    def gpu_hints(self, cloud: Cloud) -> dict[str, str]:
        """GPU id per instance type, and per family where every row of the family agrees."""
        rows = [r for r in self.instances if r.cloud == cloud]
        by_family: dict[str, set[str]] = {}
        for r in rows:
            by_family.setdefault(r.family, set()).add(r.gpu)
        hints = {fam: next(iter(ids)) for fam, ids in by_family.items() if len(ids) == 1}
        hints.update({r.instance_type: r.gpu for r in rows})
        return hints


@dataclass(frozen=True)
class FetchRun:
    results: list[RegionResult]
    failures: list[RegionFailure]
    complete: dict[Cloud, bool]  # every default region asked and answered
    priced: dict[Cloud, tuple[Billing, ...]]
    notes: list[str]


def _overlay(base: Sequence[T], overlay: Sequence[T], key: Callable[[T], object]) -> list[T]:
    replaced = {key(r): r for r in overlay}
    merged = [replaced.pop(key(r), r) for r in base]
    merged.extend(r for r in overlay if key(r) in replaced)
    return merged


def _read_optional(path: Path, model: type[T]) -> list[T]:
    return read_csv_rows(path, model) if path.is_file() else []


def load_base(target: SyncTarget) -> Base:
    gpus = read_yaml_rows(target.knowledge_dir / GPUS_FILE, GpuSpec)
    instances = _read_optional(target.knowledge_dir / INSTANCES_FILE, InstanceRow)
    prices = _read_optional(target.knowledge_dir / PRICES_FILE, PriceRow)
    if target.write_knowledge:
        return Base(instances, prices, instances, prices, frozenset(g.id for g in gpus))
    over_i = _read_optional(target.overlay_dir / OVERLAY_INSTANCES, InstanceRow)
    over_p = _read_optional(target.overlay_dir / OVERLAY_PRICES, PriceRow)
    return Base(
        instances, prices, _overlay(instances, over_i, instance_key), _overlay(prices, over_p, price_key),
        frozenset(g.id for g in gpus),
    )


def fetch_all(
    fetchers: Sequence[RegionFetcher],
    regions: Mapping[Cloud, Sequence[str]],
    progress: SyncProgress | None = None,
) -> FetchRun:
    """Each fetcher over its regions (given, else its defaults). CredentialsError propagates: nothing to write."""
    progress = progress or _NoProgress()
    results: list[RegionResult] = []
    failures: list[RegionFailure] = []
    complete: dict[Cloud, bool] = {}
    for f in fetchers:
        asked = tuple(regions.get(f.cloud) or f.default_regions)
        ok_all = True
        for region in asked:
            progress.region_started(f.cloud, region, f.calls_per_region())
            try:
                results.append(f.fetch_region(region, progress.call_done))
                progress.region_done(True)
            except RegionFetchError as exc:
                failures.append(RegionFailure(f.cloud, region, str(exc)))
                ok_all = False
                progress.region_done(False)
        complete[f.cloud] = ok_all and not regions.get(f.cloud)
    notes = [f.price_note for f in fetchers if f.price_note]
    priced = {f.cloud: tuple(f.priced_billings) for f in fetchers}
    return FetchRun(results, failures, complete, priced, notes)


def _cell(name: str, value: Any) -> str:
    if value is None or (name == "stale" and value is False):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def _header(path: Path, model: type[BaseModel]) -> list[str]:
    fields = list(model.model_fields)
    if path.is_file():
        with path.open(encoding="utf-8", newline="") as fh:
            existing = next(csv.reader(fh), [])
        ordered = [c for c in existing if c in fields]
        return ordered + [f for f in fields if f not in ordered]
    return fields


def write_rows(path: Path, rows: Sequence[BaseModel], model: type[BaseModel]) -> None:
    """Write rows as CSV in the file's own column order; atomic (temp file, then rename)."""
    header = _header(path, model)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        for r in rows:
            w.writerow([_cell(c, getattr(r, c)) for c in header])
    os.replace(tmp, path)


def _check_references(instances: Sequence[InstanceRow], prices: Sequence[PriceRow], gpu_ids: frozenset[str]) -> None:
    known = {r.instance_type for r in instances}
    problems = [f"{r.instance_type}: unknown GPU '{r.gpu}'" for r in instances if r.gpu not in gpu_ids]
    problems += [f"price for unknown instance '{p.instance_type}'" for p in prices if p.instance_type not in known]
    if problems:
        raise CatalogError("The merged catalog does not validate:\n" + "\n".join(problems),
                           "Nothing was written. Fix the knowledge files, then sync again.")


def apply_sync(base: Base, run: FetchRun, target: SyncTarget) -> SyncDiff:
    """Merge the fetched rows into base, write the result (unless a dry run) and return the diff."""
    skipped: list[Skipped] = [s for r in run.results for s in r.skipped]
    fresh_instances: list[InstanceRow] = []
    for res in run.results:
        for row in res.instances:
            if row.gpu in base.gpu_ids:
                fresh_instances.append(row)
            else:
                skipped.append(Skipped(row.cloud, res.region, row.instance_type, f"GPU id {row.gpu} not in gpus.yaml"))
    kept = {r.instance_type for r in fresh_instances}
    fresh_prices = [p for r in run.results for p in r.prices if p.instance_type in kept]
    answered: dict[Cloud, set[str]] = {}
    for res in run.results:
        answered.setdefault(res.cloud, set()).add(res.region)
    scope = SyncScope(
        regions={c: frozenset(r) for c, r in answered.items()},
        complete=run.complete,
        priced={c: frozenset(bs) for c, bs in run.priced.items()},
        seen=frozenset((s.cloud, s.instance_type) for s in skipped if s.instance_type not in kept),
    )
    merged = merge(base.instances, base.prices, fresh_instances, fresh_prices, scope)
    diff = compute_diff(
        base.instances, merged.instances, base.prices, merged.prices, fresh_prices, merged.stale_price_reasons,
        synced={c: tuple(sorted(r)) for c, r in answered.items()},
        skipped=skipped,
        failures=run.failures,
        notes=[*run.notes, *(n for r in run.results for n in r.notes)],
    )
    if target.dry_run or not run.results:
        return diff
    _check_references(merged.instances, merged.prices, base.gpu_ids)
    if target.write_knowledge:
        paths = (target.knowledge_dir / INSTANCES_FILE, target.knowledge_dir / PRICES_FILE)
        inst_rows, price_rows = merged.instances, merged.prices
    else:
        paths = (target.overlay_dir / OVERLAY_INSTANCES, target.overlay_dir / OVERLAY_PRICES)
        shipped_i = {instance_key(r): r for r in base.shipped_instances}
        shipped_p = {price_key(p): p for p in base.shipped_prices}
        inst_rows = [r for r in merged.instances if shipped_i.get(instance_key(r)) != r]
        price_rows = [p for p in merged.prices if shipped_p.get(price_key(p)) != p]
    write_rows(paths[0], inst_rows, InstanceRow)
    write_rows(paths[1], price_rows, PriceRow)
    return replace(diff, written=tuple(str(p) for p in paths))
