"""The user's price laid over the catalog for one turn (issue 31: '京东云的A800每卡每小时只要8元' was a budget of ¥8), on a
four-instance table made here."""

from __future__ import annotations

from datetime import date

from service.catalog.loader import Catalog
from service.catalog.queries import best_price
from service.catalog.schema import InstanceRow, PriceRow
from service.catalog.user_prices import UserPrice, with_user_price

TODAY = date(2026, 11, 30)


def _inst(cloud: str, name: str, gpu: str, count: float) -> InstanceRow:
    return InstanceRow(cloud=cloud, family=name.split(".")[0], instance_type=name, gpu=gpu,  # type: ignore[arg-type]
                       gpu_count=count, gpu_memory_gib=80, vcpus=16, memory_gib=64, sale_status="main", source="test",
                       as_of=TODAY, confidence="official")


def _price(name: str, billing: str, cny: float) -> PriceRow:
    return PriceRow(instance_type=name, billing=billing, price_cny=cny,  # type: ignore[arg-type]
                    unit="month" if billing == "monthly" else "hour", source="test", as_of=TODAY,
                    confidence="official")


INSTANCES = (
    _inst("jdcloud", "A.8", "A800", 8),  # priced by the user
    _inst("jdcloud", "A.1", "A800", 1),  # priced by the user
    _inst("tencent", "T.8", "A800", 8),  # the same GPU on the other cloud: its own price stays
    _inst("jdcloud", "A.q", "A800", 0.25),  # a quarter card: not what a per-card price is for
)
PRICES = (_price("A.8", "on_demand", 200.0), _price("A.8", "monthly", 90_000.0), _price("T.8", "on_demand", 210.0),
          _price("A.q", "on_demand", 9.0))
CATALOG = Catalog(gpus=(), instances=INSTANCES, prices=PRICES, models=())


def test_the_users_price_costs_each_whole_card_instance_on_its_cloud() -> None:
    out = with_user_price(CATALOG, UserPrice("A800", 8.0, "jdcloud", "每卡每小时只要8元"), TODAY)
    assert [r.instance_type for r in out.instances] == ["A.8", "A.1"]
    od = best_price("A.8", "on_demand", out.catalog.prices)
    assert od is not None and od.price_cny == 64.0 and od.confidence == "user"  # 8 cards x ¥8
    assert "¥8/卡时" in od.note_zh and "每卡每小时只要8元" in od.note_zh
    assert best_price("A.8", "monthly", out.catalog.prices) is None  # the published monthly price gives way
    one = best_price("A.1", "on_demand", out.catalog.prices)
    assert one is not None and one.price_cny == 8.0  # an instance with no published price gets the user's
    t8 = best_price("T.8", "on_demand", out.catalog.prices)
    assert t8 is not None and t8.price_cny == 210.0  # another cloud's A800 keeps its price
    slice_ = best_price("A.q", "on_demand", out.catalog.prices)
    assert slice_ is not None and slice_.price_cny == 9.0


def test_without_a_cloud_every_cloud_is_priced() -> None:
    out = with_user_price(CATALOG, UserPrice("A800", 8.0), TODAY)
    assert {r.instance_type for r in out.instances} == {"A.8", "A.1", "T.8"}


def test_a_gpu_the_catalog_does_not_sell_prices_nothing() -> None:
    out = with_user_price(CATALOG, UserPrice("H100", 8.0, "jdcloud"), TODAY)
    assert out.instances == () and out.catalog is CATALOG
