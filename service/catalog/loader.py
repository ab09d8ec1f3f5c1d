"""Load and validate the knowledge files into an immutable Catalog. Nothing is read at import."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from service.catalog.reference import REFERENCE_FILE, ReferencePrice
from service.catalog.schema import BillingRule, FamilyRow, GpuSpec, InstanceRow, ModelSpec, PriceRow
from service.errors import CatalogError
from service.yamlio import load_yaml

T = TypeVar("T", bound=BaseModel)

GPUS_FILE = "catalog/gpus.yaml"
INSTANCES_FILE = "catalog/instances.csv"
PRICES_FILE = "catalog/prices.csv"
BILLING_RULES_FILE = "catalog/billing_rules.csv"  # optional: a knowledge dir without it has no rules
FAMILIES_FILE = "catalog/families.csv"  # optional: families the clouds' documents name, sized or by name only
MODELS_FILE = "models.yaml"


@dataclass(frozen=True)
class Catalog:
    gpus: tuple[GpuSpec, ...]
    instances: tuple[InstanceRow, ...]
    prices: tuple[PriceRow, ...]
    models: tuple[ModelSpec, ...]
    origins: tuple[str, ...] = field(default=())  # files the catalog was built from, in overlay order
    billing_rules: tuple[BillingRule, ...] = field(default=())
    families: tuple[FamilyRow, ...] = field(default=())
    # other clouds' list prices for the same GPUs: shown beside a plan as a reference, never planned on
    reference_prices: tuple[ReferencePrice, ...] = field(default=())

    def family(self, cloud: str | None, name: str) -> FamilyRow | None:
        """The family row of `name` (case-insensitive), on `cloud` when given."""
        key = name.strip().lower()
        return next((f for f in self.families if f.family.lower() == key and (cloud is None or f.cloud == cloud)),
                    None)

    def billing_rule(self, cloud: str, family: str) -> BillingRule | None:
        for r in self.billing_rules:
            if r.cloud == cloud and r.family == family:
                return r
        return None

    def gpu(self, gpu_id: str) -> GpuSpec:
        for g in self.gpus:
            if g.id == gpu_id:
                return g
        raise KeyError(gpu_id)


def _errors_text(path: Path, where: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "row"
        parts.append(f"{path}:{where}: field '{loc}': {err['msg']}")
    return "\n".join(parts)


def _validate(rows: Iterable[tuple[str, dict[str, Any]]], model: type[T], path: Path) -> list[T]:
    out: list[T] = []
    problems: list[str] = []
    for where, raw in rows:
        try:
            out.append(model.model_validate(raw))
        except ValidationError as exc:
            problems.append(_errors_text(path, where, exc))
    if problems:
        raise CatalogError("\n".join(problems), f"Fix the rows above in {path}, then run `gpu-advisor catalog validate`.")
    return out


# Validated rows by (file, its mtime and size, row model): the rows are frozen, so one process reads an unchanged
# file once (a server's rebuilt index, each test's fresh data directory) and an edited file again.
_ROWS: dict[tuple[str, int, int, str], tuple[Any, ...]] = {}


def read_yaml_rows(path: Path, model: type[T]) -> list[T]:
    try:
        st = path.stat()
    except OSError as exc:
        raise CatalogError(f"Cannot read {path}: {exc}", "Check that the file exists and is valid YAML.") from exc
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size, f"{model.__module__}.{model.__qualname__}")
    if key not in _ROWS:
        _ROWS[key] = tuple(_read_yaml_rows(path, model))
    return list(_ROWS[key])


def _read_yaml_rows(path: Path, model: type[T]) -> list[T]:
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogError(f"Cannot read {path}: {exc}", "Check that the file exists and is valid YAML.") from exc
    if not isinstance(data, list):
        raise CatalogError(f"{path} must hold a YAML list of rows.", "Start each row with '- '.")
    return _validate(((f"item {i + 1}", row) for i, row in enumerate(data)), model, path)


def read_csv_rows(path: Path, model: type[T]) -> list[T]:
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            raw_rows = list(csv.DictReader(fh))
    except OSError as exc:
        raise CatalogError(f"Cannot read {path}: {exc}", "Check the path.") from exc
    known = set(model.model_fields)
    cleaned: list[tuple[str, dict[str, Any]]] = []
    for i, row in enumerate(raw_rows):
        # Empty cells mean "default"; unknown columns are reported by extra="forbid".
        values = {k: v for k, v in row.items() if k is not None and v not in ("", None)}
        extra = [k for k in row if k is not None and k not in known]
        for k in extra:
            values[k] = row[k]
        cleaned.append((f"line {i + 2}", values))
    return _validate(cleaned, model, path)


def _merge(base: Sequence[T], overlay: Sequence[T], key: Any) -> list[T]:
    """Overlay rows replace base rows with the same key; new keys are appended."""
    replaced = {key(r): r for r in overlay}
    merged = [replaced.pop(key(r), r) for r in base]
    merged.extend(r for r in overlay if key(r) in replaced)
    return merged


def _price_key(p: PriceRow) -> tuple[str, str, str]:
    return (p.instance_type, p.billing, p.region)


def _instance_key(r: InstanceRow) -> tuple[str, str]:
    return (r.cloud, r.instance_type)


def load_catalog(
    knowledge_dir: Path,
    overlay_dir: Path | None = None,
    prices_file: Path | None = None,
) -> Catalog:
    """Shipped files, then a synced overlay (data dir), then a user price sheet, each superseding the last."""
    origins = [str(knowledge_dir)]
    gpus = read_yaml_rows(knowledge_dir / GPUS_FILE, GpuSpec)
    instances = read_csv_rows(knowledge_dir / INSTANCES_FILE, InstanceRow)
    prices = read_csv_rows(knowledge_dir / PRICES_FILE, PriceRow)
    models = read_yaml_rows(knowledge_dir / MODELS_FILE, ModelSpec)
    rules_file = knowledge_dir / BILLING_RULES_FILE
    rules = read_csv_rows(rules_file, BillingRule) if rules_file.is_file() else []
    families_file = knowledge_dir / FAMILIES_FILE
    families = read_csv_rows(families_file, FamilyRow) if families_file.is_file() else []
    reference_file = knowledge_dir / REFERENCE_FILE
    reference = read_csv_rows(reference_file, ReferencePrice) if reference_file.is_file() else []
    if overlay_dir is not None and overlay_dir.is_dir():
        inst_overlay = overlay_dir / "instances.csv"
        price_overlay = overlay_dir / "prices.csv"
        if inst_overlay.is_file():
            instances = _merge(instances, read_csv_rows(inst_overlay, InstanceRow), _instance_key)
            origins.append(str(inst_overlay))
        if price_overlay.is_file():
            prices = _merge(prices, read_csv_rows(price_overlay, PriceRow), _price_key)
            origins.append(str(price_overlay))
    if prices_file is not None:
        from service.catalog.provenance import user_sheet_problems

        problems = user_sheet_problems(prices_file, {r.instance_type for r in instances})
        if problems:
            raise CatalogError("\n".join(problems), f"Fix these rows of {prices_file} (each line says how), then run "
                               f"`gpu-advisor catalog validate --prices {prices_file}`.")
        user = read_csv_rows(prices_file, PriceRow)
        overridden = {(p.instance_type, p.billing) for p in user}
        prices = [p for p in prices if (p.instance_type, p.billing) not in overridden] + user
        origins.append(str(prices_file))
    catalog = Catalog(tuple(gpus), tuple(instances), tuple(prices), tuple(models), tuple(origins), tuple(rules),
                      tuple(families), tuple(reference))
    check_references(catalog)
    return catalog


def check_references(catalog: Catalog) -> None:
    """Cross-file checks: ids unique, every instance's GPU known, every price's instance known."""
    problems: list[str] = []
    gpu_ids = [g.id for g in catalog.gpus]
    problems += [f"gpus.yaml: duplicate id {i}" for i in sorted({i for i in gpu_ids if gpu_ids.count(i) > 1})]
    model_ids = [m.id for m in catalog.models]
    problems += [f"models.yaml: duplicate id {i}" for i in sorted({i for i in model_ids if model_ids.count(i) > 1})]
    known_gpus = set(gpu_ids)
    seen: set[tuple[str, str]] = set()
    for r in catalog.instances:
        if r.gpu not in known_gpus:
            problems.append(f"instances.csv: {r.instance_type} names unknown GPU '{r.gpu}'")
        if _instance_key(r) in seen:
            problems.append(f"instances.csv: duplicate instance {r.cloud}/{r.instance_type}")
        seen.add(_instance_key(r))
    problems += [f"families.csv: {f.family} names unknown GPU '{f.gpu}'" for f in catalog.families
                 if f.gpu and f.gpu not in known_gpus]
    problems += [f"reference_prices.csv: {r.cloud} {r.instance_type or r.product} names unknown GPU '{r.gpu}'"
                 for r in catalog.reference_prices if r.gpu not in known_gpus]
    known_types = {r.instance_type for r in catalog.instances}
    problems += [
        f"prices.csv: price for unknown instance '{p.instance_type}'"
        for p in catalog.prices
        if p.instance_type not in known_types
    ]
    if problems:
        raise CatalogError("\n".join(problems), "Fix the references, then run `gpu-advisor catalog validate`.")
