"""A price the user gives in a message ('京东云的A800每卡每小时只要8元'), laid over the catalog for that turn.

The price is per GPU-hour, for one GPU and, when the message names one, one cloud. Each matching instance gets one
on-demand hourly row at that price times its GPUs, and its published rows (on-demand, monthly, spot) give way: the
user's price is the one they pay, so the plan is costed at it and says so. Nothing is written: the overlay is a new
`Catalog` value for the turn.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

from service.catalog.loader import Catalog
from service.catalog.schema import InstanceRow, PriceRow


@dataclass(frozen=True)
class UserPrice:
    """The user's own price: `gpu` is a catalog GPU id, `cloud` None for any cloud; `said` as the message wrote
    it ('每卡每小时只要8元')."""

    gpu: str
    cny_per_gpu_hour: float
    cloud: str | None = None
    said: str = ""


@dataclass(frozen=True)
class Overlaid:
    """The catalog with the user's price, and the instances it prices (none: the catalog sells no such GPU there)."""

    catalog: Catalog
    instances: tuple[InstanceRow, ...]


def with_user_price(catalog: Catalog, price: UserPrice, today: date | None = None) -> Overlaid:
    """The catalog with `price` on every whole-GPU instance of its GPU (on its cloud, when it names one)."""
    matched = tuple(r for r in catalog.instances if r.gpu == price.gpu and not r.is_slice
                    and (price.cloud is None or r.cloud == price.cloud))
    if not matched:
        return Overlaid(catalog, ())
    types = {r.instance_type for r in matched}
    when = today or date.today()
    rows = tuple(PriceRow(instance_type=r.instance_type, billing="on_demand", unit="hour",
                          price_cny=price.cny_per_gpu_hour * r.gpu_count, source="the user's message",
                          as_of=when, confidence="user",
                          note=f"your price ¥{price.cny_per_gpu_hour:g}/GPU-hour x {r.gpu_count:g} GPUs"
                               + (f" ('{price.said}')" if price.said else ""),
                          note_zh=f"你给的价格 ¥{price.cny_per_gpu_hour:g}/卡时 × {r.gpu_count:g} 卡"
                                  + (f"（“{price.said}”）" if price.said else ""))
                 for r in matched)
    kept = tuple(p for p in catalog.prices if p.instance_type not in types)
    return Overlaid(replace(catalog, prices=kept + rows), matched)
