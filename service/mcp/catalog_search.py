"""search_catalog: GPU specs, instance types with their prices, or prices alone, filtered; every row keeps the
source, as-of date and confidence it has in knowledge/ (the rows as GET /v1/catalog/* shows them)."""

from __future__ import annotations

from typing import Any

from service.catalog.loader import Catalog
from service.catalog.queries import best_price, find_instance, instance_suggestions, prices_for, resolve_gpu
from service.catalog.schema import InstanceRow
from service.errors import UnknownNameError
from service.mcp.args import CatalogSearchArgs
from service.planner.catalog_view import instance_dict
from service.planner.costing import price_dict
from service.planner.questions.facts import family

Artifact = dict[str, Any]


def _instances(cat: Catalog, args: CatalogSearchArgs) -> list[InstanceRow]:
    rows = list(cat.instances)
    if args.instance_type:
        inst = find_instance(args.instance_type, cat.instances)
        if inst is None:
            raise UnknownNameError("instance type", args.instance_type,
                                   instance_suggestions(args.instance_type, cat.instances),
                                   "Use an instance type from search_catalog (kind instances).")
        rows = [inst]
    if args.gpu:
        fam = family(resolve_gpu(args.gpu, cat.gpus)[0].id)
        rows = [r for r in rows if family(r.gpu) == fam]
    if args.cloud:
        rows = [r for r in rows if r.cloud == args.cloud]
    return rows


def _gpus(cat: Catalog, args: CatalogSearchArgs) -> list[Artifact]:
    gpus = list(cat.gpus)
    if args.gpu:
        fam = family(resolve_gpu(args.gpu, cat.gpus)[0].id)
        gpus = [g for g in gpus if family(g.id) == fam]
    out = []
    for g in gpus:
        sold = [r for r in cat.instances if r.gpu == g.id and (not args.cloud or r.cloud == args.cloud)]
        if args.cloud and not sold:
            continue
        out.append({**g.model_dump(mode="json"), "sold_as": sorted(r.instance_type for r in sold)})
    return out


def _prices(cat: Catalog, args: CatalogSearchArgs) -> list[Artifact]:
    out = []
    for inst in _instances(cat, args):
        for p in prices_for(inst.instance_type, cat.prices):
            if args.billing and p.billing != args.billing:
                continue
            per_gpu = p.price_cny / inst.gpu_count if p.unit == "hour" and not p.on_request else None
            out.append({"cloud": inst.cloud, "instance_type": inst.instance_type, "gpu": inst.gpu,
                        "gpu_count": inst.gpu_count, "billing": p.billing, **price_dict(p),
                        "per_gpu_hour_cny": None if per_gpu is None else round(per_gpu, 2),
                        "planner_uses": best_price(inst.instance_type, p.billing, cat.prices) == p})
    out.sort(key=lambda r: (r["stale"], r["per_gpu_hour_cny"] is None, r["per_gpu_hour_cny"] or 0.0,
                            r["instance_type"], r["billing"]))
    return out


def search_catalog(cat: Catalog, args: CatalogSearchArgs) -> Artifact:
    if args.kind == "gpus":
        rows = _gpus(cat, args)
    elif args.kind == "prices":
        rows = _prices(cat, args)
    else:
        rows = [instance_dict(r, list(prices_for(r.instance_type, cat.prices))) for r in _instances(cat, args)]
    filters = args.model_dump(exclude={"kind", "limit"}, exclude_none=True)
    return {"kind": args.kind, "filters": filters, "matched": len(rows), "rows": rows[:args.limit]}
