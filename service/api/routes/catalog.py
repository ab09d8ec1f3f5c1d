"""GET /v1/catalog/gpus and /v1/catalog/instances: catalog rows, each with its source, date and confidence."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import ConfigDict

from service.api.deps import CatalogDep
from service.labels import price_when
from service.planner.catalog_view import CatalogInstance, CatalogQuery, catalog_rows

router = APIRouter(prefix="/catalog", tags=["catalog"])


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
                                     "confidence": p.confidence,
                                     "content_as_of": p.content_as_of.isoformat() if p.content_as_of else None,
                                     "date_en": price_when(p, "en"), "date_zh": price_when(p, "zh")}
        out.append({**g.model_dump(mode="json"), "sold_as": sorted(r.instance_type for r in rows),
                    "cheapest_on_demand": cheapest})
    return out


class InstanceFilters(CatalogQuery):
    """The catalog query as query parameters (other parameters are ignored, as HTTP caches and proxies add them)."""

    model_config = ConfigDict(extra="ignore", frozen=True)


@router.get("/instances", response_model=list[CatalogInstance])
def list_instances(catalog: CatalogDep, filters: Annotated[InstanceFilters, Query()]) -> list[CatalogInstance]:
    """Instances with their prices, filtered and sorted (the query of `gpu-advisor catalog list` and of MCP
    search_catalog). Each price with its source, its date (`as_of`, or for an undated page `captured`; `date_en` /
    `date_zh` say it as a reader reads it), its confidence, ¥ per GPU-hour and per dense BF16 TFLOPS-hour;
    `price_on_request` rows have no price to pay: ask the cloud (`quote_link`). A GPU name the catalog does not
    know is a 400 with suggestions; a value out of range or not one of the choices is a 422 naming the parameter."""
    return catalog_rows(catalog, CatalogQuery.model_validate(filters.model_dump()))
