"""search_catalog: the catalog query (service/planner/catalog_view.py, as GET /v1/catalog/instances and `catalog
list` run it) answered compactly for an agent: instance rows with the price the planner uses under each billing rule
(¥, ¥/GPU-hour, ¥/TFLOPS-hour, the date as a reader reads it, confidence, source), one row per price, or GPU specs.
Every row keeps the source and date it has in knowledge/."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from service.catalog.loader import Catalog
from service.catalog.queries import find_instance, gpu_family, instance_suggestions
from service.errors import UnknownNameError
from service.labels import strip_internal
from service.mcp.args import CatalogSearchArgs
from service.planner.catalog_view import (
    BILLINGS,
    CatalogInstance,
    CatalogQuery,
    InstancePrice,
    catalog_rows,
    gpu_family_named,
)

Artifact = dict[str, Any]
_QUERY = set(CatalogQuery.model_fields)
_INSTANCE_FILTERS = ("cloud", "min_cards", "rdma", "billing")  # what narrows a GPU to the instances it is sold as


class BriefPrice(BaseModel):
    """One billing rule's price, as an agent reads it."""

    model_config = ConfigDict(extra="forbid")

    price_cny: float
    unit: str
    per_gpu_hour_cny: float | None
    per_tflops_hour_cny: float | None
    date: str  # the source's own date, or "page undated · captured 2026-12-01"
    confidence: str
    source: str
    on_request: bool = False  # the flags are left out when false
    promo: bool = False
    stale: bool = False


class BriefInstance(BaseModel):
    """An instance row kept small: the shape, the price of each billing rule, the quote link."""

    model_config = ConfigDict(extra="forbid")

    cloud: str
    instance_type: str
    gpu: str
    gpu_count: float
    gpu_memory_gib: float
    vcpus: int | None = None  # None: not published
    memory_gib: float | None = None  # None: not published
    network_gbps: float | None
    rdma: bool
    fp8: bool
    dense_bf16_tflops: float | None
    sale_status: str
    prices: dict[str, BriefPrice]
    price_on_request: bool
    quote_link: str
    source: str  # the instance facts' own source and date
    as_of: str


def _brief_price(p: InstancePrice) -> BriefPrice:
    return BriefPrice(price_cny=p.price_cny, unit=p.unit, per_gpu_hour_cny=p.per_gpu_hour_cny,
                      per_tflops_hour_cny=p.per_tflops_hour_cny, date=p.date_en, confidence=p.confidence,
                      source=strip_internal(p.source), on_request=p.on_request, promo=p.promo, stale=p.stale)


def brief(r: CatalogInstance) -> BriefInstance:
    return BriefInstance(
        cloud=r.cloud, instance_type=r.instance_type, gpu=r.gpu, gpu_count=r.gpu_count, gpu_memory_gib=r.gpu_memory_gib,
        vcpus=r.vcpus, memory_gib=r.memory_gib, network_gbps=r.network_gbps, rdma=r.rdma, fp8=r.fp8,
        dense_bf16_tflops=r.dense_bf16_tflops, sale_status=r.sale_status, price_on_request=r.price_on_request,
        prices={b: _brief_price(p) for b in BILLINGS if (p := r.price(b)) is not None},
        quote_link=r.quote_link, source=strip_internal(r.source), as_of=r.as_of.isoformat())


def _query(args: CatalogSearchArgs, **changes: Any) -> CatalogQuery:
    return CatalogQuery.model_validate({**args.model_dump(include=_QUERY), **changes})


def _instances(cat: Catalog, args: CatalogSearchArgs) -> list[CatalogInstance]:
    rows = catalog_rows(cat, _query(args))
    if args.instance_type:
        inst = find_instance(args.instance_type, cat.instances)
        if inst is None:
            raise UnknownNameError("instance type", args.instance_type,
                                   instance_suggestions(args.instance_type, cat.instances),
                                   "Use an instance type from search_catalog (kind instances).")
        rows = [r for r in rows if r.instance_type == inst.instance_type]
    return rows


def _gpus(cat: Catalog, args: CatalogSearchArgs) -> list[Artifact]:
    """GPU specs; memory and FP8 filter the GPU itself, cloud, cards, RDMA and billing the instances it is sold as
    (a GPU none of them carries is left out)."""
    fam = gpu_family_named(args.gpu, cat) if args.gpu else None
    narrowed = any(getattr(args, f) is not None for f in _INSTANCE_FILTERS)
    sold = catalog_rows(cat, _query(args, gpu=None, min_memory_gb=None, fp8=None))
    out = []
    for g in cat.gpus:
        if ((fam and gpu_family(g.id) != fam) or (args.min_memory_gb is not None and g.memory_gib < args.min_memory_gb)
                or (args.fp8 is not None and g.supports_fp8 != args.fp8)):
            continue
        sold_as = sorted(r.instance_type for r in sold if r.gpu == g.id)
        if narrowed and not sold_as:
            continue
        out.append({**g.model_dump(mode="json"), "sold_as": sold_as})
    return out


def _prices(cat: Catalog, args: CatalogSearchArgs) -> list[Artifact]:
    out = []
    for r in _instances(cat, args):
        for p in r.prices:
            if args.billing and p.billing != args.billing:
                continue
            out.append({"cloud": r.cloud, "instance_type": r.instance_type, "gpu": r.gpu, "gpu_count": r.gpu_count,
                        **p.model_dump(mode="json", exclude={"instance_type", "date_zh", "note_zh"})})
    out.sort(key=lambda x: (x["stale"], x["per_gpu_hour_cny"] is None, x["per_gpu_hour_cny"] or 0.0,
                            x["instance_type"], x["billing"]))
    return out


def search_catalog(cat: Catalog, args: CatalogSearchArgs) -> Artifact:
    if args.kind == "gpus":
        rows = _gpus(cat, args)
    elif args.kind == "prices":
        rows = _prices(cat, args)
    else:
        rows = [brief(r).model_dump(mode="json", exclude_defaults=True) for r in _instances(cat, args)]
    filters = args.model_dump(exclude={"kind", "limit"}, exclude_none=True)
    return {"kind": args.kind, "filters": filters, "matched": len(rows), "rows": rows[:args.limit]}
