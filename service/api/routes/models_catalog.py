"""GET /v1/catalog/models: the models the engine can size (for pickers such as the web page's model search)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.api.deps import CatalogDep

router = APIRouter(prefix="/catalog", tags=["catalog"])


@router.get("/models")
def list_models(catalog: CatalogDep) -> list[dict[str, Any]]:
    """Each model's id, name, family, kind, aliases and published parameter count (billions)."""
    return [{"id": m.id, "name": m.name, "family": m.family, "kind": m.kind, "aliases": list(m.aliases),
             "params_b": m.params_published_b, "active_params_b": m.active_params_b} for m in catalog.models]
