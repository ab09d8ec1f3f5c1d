"""The catalog query (service/planner/catalog_view.py) on a tiny synthetic catalog, as SkyPilot tests its catalog:
five instances, a comment per case, so a price fix in knowledge/ never moves a test.

    T-A40x1   tencent  1x A100-40G   on-demand 30/h (official, undated page), monthly 14,400 (official)
    T-A80x8   tencent  8x A100-80G   RDMA, on-demand 200/h (estimate, dated), spot 80/h (third party)
    T-H8x8    tencent  8x H800       RDMA, FP8, an on-request reference only (price on request)
    J-L20x2   jdcloud  2x L20        FP8, on-demand 20/h (official), monthly 7,200 (official)
    J-L20x4   jdcloud  4x L20        FP8, monthly 12,000 only
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from pydantic import ValidationError

from service.catalog.loader import Catalog
from service.catalog.schema import GpuSpec, InstanceRow, PriceRow
from service.errors import UnknownGpuError
from service.planner.catalog_view import CatalogQuery, catalog_rows

DAY = date(2026, 9, 15)


def _gpu(gid: str, memory: float, tflops: float, fp8: bool, arch: str = "ampere") -> GpuSpec:
    return GpuSpec(id=gid, name=f"NVIDIA {gid}", aliases=[gid.removesuffix("-SXM")], arch=arch, form_factor="sxm", memory_gib=memory, memory_type="HBM",
                   mem_bw_gb_s=2000, dense_16bit_tflops=tflops, fp8_tflops=2 * tflops if fp8 else None,
                   supports_bf16=True, supports_fp8=fp8, supports_flash_attn2=True, nvlink_gb_s=600, pcie_gen=4,
                   tdp_w=400, compute_capability="9.0" if fp8 else "8.0", min_cuda="11.0", confidence="official",
                   source="https://example.com/gpu", as_of=DAY)


def _inst(cloud: str, itype: str, gpu: str, count: float, memory: float, rdma: bool = False) -> InstanceRow:
    return InstanceRow(cloud=cloud, family=itype.split("x")[0], instance_type=itype, gpu=gpu, gpu_count=count,
                       gpu_memory_gib=memory, vcpus=int(16 * count), memory_gib=96 * count, network_gbps=25,
                       rdma=rdma, sale_status="on_sale", source="https://example.com/inst", as_of=DAY,
                       confidence="official")


def _price(itype: str, billing: str, cny: float, confidence: str = "official", **kw: Any) -> PriceRow:
    unit = "month" if billing == "monthly" else "hour"
    dates = {"captured": date(2026, 12, 1)} if kw.pop("undated", False) else {"as_of": DAY}
    return PriceRow(instance_type=itype, billing=billing, price_cny=cny, unit=unit, source="https://example.com/p",
                    confidence=confidence, **dates, **kw)


@pytest.fixture(scope="module")
def cat() -> Catalog:
    gpus = (_gpu("A100-40G-SXM", 40, 312, False), _gpu("A100-80G-SXM", 80, 312, False),
            _gpu("H800-SXM", 80, 990, True, "hopper"), _gpu("L20", 48, 120, True, "ada"))
    instances = (_inst("tencent", "T-A40x1", "A100-40G-SXM", 1, 40),
                 _inst("tencent", "T-A80x8", "A100-80G-SXM", 8, 80, rdma=True),
                 _inst("tencent", "T-H8x8", "H800-SXM", 8, 80, rdma=True),
                 _inst("jdcloud", "J-L20x2", "L20", 2, 48),
                 _inst("jdcloud", "J-L20x4", "L20", 4, 48))
    prices = (_price("T-A40x1", "on_demand", 30, undated=True), _price("T-A40x1", "monthly", 14_400, undated=True),
              _price("T-A80x8", "on_demand", 200, "estimate"), _price("T-A80x8", "spot", 80, "third_party"),
              _price("T-H8x8", "on_demand", 400, "estimate", on_request=True),
              _price("J-L20x2", "on_demand", 20), _price("J-L20x2", "monthly", 7_200),
              _price("J-L20x4", "monthly", 12_000))
    return Catalog(gpus=gpus, instances=instances, prices=prices, models=())


def row(cat: Catalog, itype: str) -> Any:
    return next(r for r in catalog_rows(cat) if r.instance_type == itype)


def names(cat: Catalog, **query: Any) -> list[str]:
    return [r.instance_type for r in catalog_rows(cat, CatalogQuery(**query))]


@pytest.mark.parametrize(("query", "expected"), [
    # no filter, ¥ per GPU-hour: on-demand rows first (J-L20x2 10, T-A80x8 25, T-A40x1 30), then monthly only
    # (J-L20x4: 12,000 / 730 / 4 = 4.11, never ranked against an on-demand hour), then the price on request
    ({}, ["J-L20x2", "T-A80x8", "T-A40x1", "J-L20x4", "T-H8x8"]),
    # the instance's price: T-A40x1 (30/h) before T-A80x8 (200/h)
    ({"sort": "price"}, ["J-L20x2", "T-A40x1", "T-A80x8", "J-L20x4", "T-H8x8"]),
    # ¥ per dense BF16 TFLOPS-hour: T-A80x8 25/312 = 0.080 < J-L20x2 10/120 = 0.083 < T-A40x1 30/312 = 0.096
    ({"sort": "price-per-tflops"}, ["T-A80x8", "J-L20x2", "T-A40x1", "J-L20x4", "T-H8x8"]),
    # a GPU family is every SKU of it: A100 = the 40G and the 80G
    ({"gpu": "A100"}, ["T-A80x8", "T-A40x1"]),
    # a SKU named (by its alias) is still its family
    ({"gpu": "A100 80G"}, ["T-A80x8", "T-A40x1"]),
    ({"cloud": "jdcloud"}, ["J-L20x2", "J-L20x4"]),
    # memory per card at least 80 GB: the A100 80G and the H800
    ({"min_memory_gb": 80}, ["T-A80x8", "T-H8x8"]),
    # at least 4 cards
    ({"min_cards": 4}, ["T-A80x8", "J-L20x4", "T-H8x8"]),
    ({"rdma": True}, ["T-A80x8", "T-H8x8"]),
    ({"rdma": False}, ["J-L20x2", "T-A40x1", "J-L20x4"]),
    ({"fp8": True}, ["J-L20x2", "J-L20x4", "T-H8x8"]),
    # billing: rows with a price under it, sorted on it (monthly: J-L20x4 4.11 < J-L20x2 4.93 < T-A40x1 19.73)
    ({"billing": "monthly"}, ["J-L20x4", "J-L20x2", "T-A40x1"]),
    # a price on request is not a price: the H800 is left out of on-demand
    ({"billing": "on_demand"}, ["J-L20x2", "T-A80x8", "T-A40x1"]),
    ({"billing": "spot"}, ["T-A80x8"]),
    # filters combine
    ({"fp8": True, "min_cards": 4, "billing": "monthly"}, ["J-L20x4"]),
    ({"gpu": "L20", "rdma": True}, []),
])
def test_filters_and_sorts(cat: Catalog, query: dict[str, Any], expected: list[str]) -> None:
    assert names(cat, **query) == expected


def test_each_price_has_its_figures_date_and_confidence(cat: Catalog) -> None:
    a40 = row(cat, "T-A40x1")
    od, mo = a40.price("on_demand"), a40.price("monthly")
    assert od is not None and mo is not None and a40.price("spot") is None
    # an undated page: no as_of, the capture said as such in both languages
    assert od.as_of is None and od.date_en == "page undated · captured 2026-12-01"
    assert od.date_zh == "页面未注明日期 · 抓取于 2026-12-01" and od.confidence == "official" and od.source
    assert (od.per_gpu_hour_cny, od.per_tflops_hour_cny) == (30, round(30 / 312, 4))
    # a month is 730 hours
    assert mo.per_gpu_hour_cny == round(14_400 / 730, 2)
    dated = row(cat, "T-A80x8").price("on_demand")
    assert dated is not None and dated.date_en == dated.date_zh == "2026-09-15" and dated.confidence == "estimate"
    assert dated.per_gpu_hour_cny == 25  # 200 / 8


def test_a_price_on_request_is_said_so_with_the_quote_link(cat: Catalog) -> None:
    h800 = row(cat, "T-H8x8")
    ref = h800.price("on_demand")
    assert h800.price_on_request and ref is not None and ref.on_request and ref.per_gpu_hour_cny is None
    assert h800.quote_link.startswith("https://buy.cloud.tencent.com")
    assert not row(cat, "J-L20x4").price_on_request  # a monthly price only is still a price


def test_rows_keep_the_gpu_facts(cat: Catalog) -> None:
    l20 = row(cat, "J-L20x2")
    assert (l20.fp8, l20.dense_bf16_tflops, l20.gpu_name, l20.rdma) == (True, 120, "NVIDIA L20", False)


def test_an_unknown_gpu_suggests_names(cat: Catalog) -> None:
    with pytest.raises(UnknownGpuError) as err:
        catalog_rows(cat, CatalogQuery(gpu="A1000"))
    assert err.value.suggestions


@pytest.mark.parametrize("bad", [
    {"sort": "cheapest"},  # not one of the sorts
    {"billing": "yearly"},  # not a billing rule
    {"min_cards": 0},  # at least one card
    {"min_memory_gb": -1},
    {"cloud": "aws"},
    {"colour": "red"},  # not a field
])
def test_bad_queries_name_the_field(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as err:
        CatalogQuery(**bad)
    assert next(iter(bad)) in str(err.value)
