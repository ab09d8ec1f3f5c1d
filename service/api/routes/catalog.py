"""GET /v1/catalog/gpus and /v1/catalog/instances: catalog rows, each with its source, date and confidence."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query

from service.api.deps import CatalogDep
from service.catalog.loader import Catalog

router = APIRouter(prefix="/catalog", tags=["catalog"])


def _gpu_family(name: str, catalog: Catalog) -> set[str]:
    """Every SKU of the GPU a name resolves to (A100 → the 40G and 80G SKUs), as `catalog list --gpu` does."""
    from service.catalog.queries import resolve_gpu

    gpu, _ = resolve_gpu(name, catalog.gpus)
    stem = gpu.id.split("-")[0]
    return {g.id for g in catalog.gpus if g.id.split("-")[0] == stem}


@router.get("/gpus")
def list_gpus(catalog: CatalogDep) -> list[dict[str, Any]]:
    """GPU specs with the instances that carry each and the cheapest on-demand price per GPU-hour per cloud."""
    from service.catalog.queries import best_price

    out = []
    for g in catalog.gpus:
        rows = [r for r in catalog.instances if r.gpu == g.id]
        cheapest: dict[str, dict[str, Any]] = {}
        for r in rows:
            p = best_price(r.instance_type, "on_demand", catalog.prices)
            if p is None or p.unit != "hour" or p.stale:
                continue
            per_gpu = p.price_cny / r.gpu_count
            if r.cloud not in cheapest or per_gpu < cheapest[r.cloud]["cny_per_gpu_hour"]:
                cheapest[r.cloud] = {"instance_type": r.instance_type, "cny_per_gpu_hour": round(per_gpu, 2),
                                     "source": p.source, "as_of": p.as_of.isoformat() if p.as_of else None,
                                     "captured": p.captured.isoformat() if p.captured else None,
                                     "confidence": p.confidence}
        out.append({**g.model_dump(mode="json"), "sold_as": sorted(r.instance_type for r in rows),
                    "cheapest_on_demand": cheapest})
    return out


@router.get("/instances")
def list_instances(
    catalog: CatalogDep,
    cloud: Literal["tencent", "jdcloud"] | None = Query(default=None),
    gpu: str | None = Query(default=None, max_length=128, description="GPU name, e.g. A100 (every A100 SKU)"),
) -> list[dict[str, Any]]:
    """Instances with their prices; each price with its source, date and confidence."""
    from service.catalog.queries import instances_for

    gpu_ids = _gpu_family(gpu, catalog) if gpu else set()
    rows = instances_for(catalog.instances, [cloud] if cloud else [], gpu_ids)
    from service.catalog.queries import prices_for
    from service.planner.catalog_view import instance_dict

    return [instance_dict(r, prices_for(r.instance_type, catalog.prices)) for r in rows]
