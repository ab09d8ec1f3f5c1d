"""The catalog as people read it: an instance row with its prices (each with source, date and confidence) and the
cloud's quote link. One view for the CLI's `catalog list/show`, GET /v1/catalog/instances, MCP search_catalog and
the assistant's catalog look-ups."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from service.catalog.schema import InstanceRow, PriceRow
from service.planner.costing import QUOTE_LINKS, price_dict


def instance_dict(inst: InstanceRow, prices: Iterable[PriceRow]) -> dict[str, Any]:
    """The instance row as JSON, its quote link and its prices (billing first, then the price's own fields)."""
    return {**inst.model_dump(mode="json"), "quote_link": QUOTE_LINKS[inst.cloud],
            "prices": [{"billing": p.billing, **price_dict(p)} for p in prices]}
