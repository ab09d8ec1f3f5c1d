"""The arguments of the MCP tools that are not question types (the question types' own are their modules' Args):
pydantic models whose JSON schema is the tool's `inputSchema`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from service.planner.catalog_view import CatalogQuery
from service.serving_workload import ServingWorkload
from service.workload import MAX_NAME_CHARS


class InferenceArgs(ServingWorkload):
    """A serving workload on one GPU type: the body of POST /v1/inference (gpu required)."""

    gpu: str = Field(min_length=1, max_length=MAX_NAME_CHARS, description="the GPU to size on, e.g. L20, A10, H800, "
                     "H20, RTX 4090 (rented here or not)")


class CatalogSearchArgs(CatalogQuery):
    """search_catalog's arguments: the catalog query (service/planner/catalog_view.py: the filters and sort of
    `catalog list` and GET /v1/catalog/instances), what to list, one instance type, and how many rows."""

    kind: Literal["gpus", "instances", "prices"] = Field(
        default="instances", description="instances: instance types with their price under each billing rule, "
        "sorted; prices: one row per price, cheapest per GPU-hour first; gpus: specs (memory and FP8 filter the "
        "GPU; cloud, cards, RDMA and billing the instances it is sold as)")
    instance_type: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS,
                                      description="one instance type, e.g. GT4.4XLARGE96")
    limit: int = Field(default=20, ge=1, le=200, description="rows returned (the total matched is reported)")
