"""Merge and diff rules of `catalog sync` (service/catalog/sync_merge.py, sync_diff.py), on hand-made rows."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from service.catalog.queries import best_price
from service.catalog.schema import InstanceRow, PriceRow
from service.catalog.sync_diff import compute_diff, diff_to_json
from service.catalog.sync_merge import SyncScope, combine_instances, merge, merge_instances, merge_prices

OLD, NEW = date(2026, 1, 1), date(2026, 11, 30)
API = "api:DescribeZoneInstanceConfigInfos"


def inst(itype: str, regions: str, status: str = "on_sale", cloud: str = "tencent", **kw: Any) -> InstanceRow:
    base: dict[str, Any] = dict(cloud=cloud, family=itype.split(".")[0], instance_type=itype, gpu="T4", gpu_count=1,
                                gpu_memory_gib=16, vcpus=8, memory_gib=32, regions=regions, sale_status=status,
                                source="doc", as_of=OLD, confidence="official")
    return InstanceRow(**{**base, **kw})


def fresh_inst(itype: str, regions: str, status: str = "on_sale", **kw: Any) -> InstanceRow:
    return inst(itype, regions, status, source=API, as_of=NEW, **kw)


def price(itype: str, value: float, region: str = "", billing: str = "on_demand", **kw: Any) -> PriceRow:
    base: dict[str, Any] = dict(instance_type=itype, billing=billing, price_cny=value,
                                unit="month" if billing == "monthly" else "hour", region=region, source="estimate",
                                as_of=OLD, confidence="estimate")
    return PriceRow(**{**base, **kw})


def api_price(itype: str, value: float, region: str, billing: str = "on_demand") -> PriceRow:
    return price(itype, value, region, billing, source=API, as_of=NEW, confidence="official")


GZ = SyncScope(regions={"tencent": frozenset({"ap-guangzhou"})},
               priced={"tencent": frozenset({"on_demand", "monthly", "spot"})})
GZ_COMPLETE = SyncScope(regions=GZ.regions, complete={"tencent": True}, priced=GZ.priced)


@pytest.mark.parametrize(
    ("regions", "scope", "stale"),
    [
        ("ap-guangzhou-3", GZ, True),  # every listed zone lies in a synced region
        ("Guangzhou-3", GZ, True),  # doc-style zone name, same region
        ("ap-guangzhou-3;ap-beijing-5", GZ, False),  # also sold in a region this sync did not ask
        ("ap-beijing-5", GZ, False),  # only elsewhere
        ("", GZ, False),  # no region known: only a complete sync may judge it
        ("", GZ_COMPLETE, True),
        ("somewhere", GZ_COMPLETE, True),
    ],
)
def test_missing_instance_goes_stale_only_when_the_sync_covered_it(regions: str, scope: SyncScope, stale: bool) -> None:
    [row] = merge_instances([inst("GN10X.2XLARGE40", regions)], [], scope)
    assert row.stale is stale


def test_other_cloud_is_never_marked_stale() -> None:
    [row] = merge_instances([inst("p.n1p40h.3xlarge", "cn-north-1", cloud="jdcloud")], [], GZ_COMPLETE)
    assert not row.stale


def test_malformed_row_the_api_returned_is_not_marked_stale() -> None:
    scope = SyncScope(regions=GZ.regions, seen=frozenset({("tencent", "GN7.5XLARGE80")}))
    [row] = merge_instances([inst("GN7.5XLARGE80", "ap-guangzhou-6")], [], scope)
    assert not row.stale


def test_api_row_supersedes_but_keeps_curated_status_zones_elsewhere_and_silent_fields() -> None:
    old = inst("PNV4.7XLARGE116", "Guangzhou-7;Shanghai-5;Beijing-6", "allowlist", local_disk="none", rdma=True)
    new = fresh_inst("PNV4.7XLARGE116", "ap-guangzhou-7")
    [row] = merge_instances([old], [new], GZ)
    assert row.source == API and row.as_of == NEW
    assert row.sale_status == "allowlist"  # the API's "on sale" does not erase the allowlist fact
    assert row.regions == "ap-guangzhou-7;Shanghai-5;Beijing-6"  # zones in unsynced regions kept
    assert row.local_disk == "none" and row.rdma


def test_sold_out_in_the_synced_region_but_listed_elsewhere_keeps_its_status() -> None:
    [row] = merge_instances([inst("GT4.41XLARGE948", "ap-guangzhou-6;ap-beijing-5")],
                            [fresh_inst("GT4.41XLARGE948", "ap-guangzhou-6", "sold_out")], GZ)
    assert row.sale_status == "on_sale"
    [row] = merge_instances([inst("GT4.41XLARGE948", "ap-guangzhou-6")],
                            [fresh_inst("GT4.41XLARGE948", "ap-guangzhou-6", "sold_out")], GZ)
    assert row.sale_status == "sold_out"


def test_stale_row_returned_again_is_fresh() -> None:
    [row] = merge_instances([inst("GN7.2XLARGE32", "ap-guangzhou-6", stale=True)],
                            [fresh_inst("GN7.2XLARGE32", "ap-guangzhou-6")], GZ)
    assert not row.stale


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (["sold_out", "sold_out"], "sold_out"),  # sold out in every region
        (["sold_out", "on_sale"], "on_sale"),  # one region still sells it
        (["allowlist", "allowlist"], "allowlist"),
    ],
)
def test_combine_regions(statuses: list[str], expected: str) -> None:
    rows = [fresh_inst("GN7.2XLARGE32", f"ap-guangzhou-{i + 6}", s) for i, s in enumerate(statuses)]
    [row] = combine_instances(rows)
    assert row.sale_status == expected
    assert row.regions == "ap-guangzhou-6;ap-guangzhou-7"


def test_api_price_replaces_same_key_and_supersedes_regionless_estimate() -> None:
    base = [price("GN7.2XLARGE32", 9.5), price("GN7.2XLARGE32", 8.2, "ap-guangzhou", source=API)]
    fresh = [api_price("GN7.2XLARGE32", 8.68, "ap-guangzhou")]
    merged, reasons = merge_prices(base, fresh, [inst("GN7.2XLARGE32", "ap-guangzhou-6")], GZ)
    assert [(p.price_cny, p.stale) for p in merged] == [(9.5, True), (8.68, False)]
    assert "superseded" in reasons[("GN7.2XLARGE32", "on_demand", "")]
    assert best_price("GN7.2XLARGE32", "on_demand", merged).price_cny == 8.68  # type: ignore[union-attr]


def test_api_price_of_another_region_is_not_superseded() -> None:
    base = [price("GN7.2XLARGE32", 9.1, "ap-shanghai", source=API)]
    merged, _ = merge_prices(base, [api_price("GN7.2XLARGE32", 8.68, "ap-guangzhou")],
                             [inst("GN7.2XLARGE32", "ap-guangzhou-6")], GZ)
    assert not merged[0].stale


@pytest.mark.parametrize(
    ("row", "stale"),
    [
        (price("GN10X.2XLARGE40", 20, "ap-guangzhou", source=API), True),  # synced region, not returned
        (price("GN10X.2XLARGE40", 20, "ap-beijing", source=API), False),  # region not synced
        (price("GN10X.2XLARGE40", 20), False),  # region-less, partial sync
    ],
)
def test_price_not_returned(row: PriceRow, stale: bool) -> None:
    merged, _ = merge_prices([row], [], [inst("GN10X.2XLARGE40", "ap-guangzhou-3")], GZ)
    assert merged[0].stale is stale


def test_unpriced_cloud_keeps_its_prices() -> None:
    scope = SyncScope(regions={"jdcloud": frozenset({"cn-north-1"})}, complete={"jdcloud": True}, priced={})
    row = price("p.n1v100.2xlarge", 20.73, "cn-north-1")
    merged, _ = merge_prices([row], [], [inst("p.n1v100.2xlarge", "cn-north-1", cloud="jdcloud")], scope)
    assert not merged[0].stale


def test_diff_reports_new_removed_price_change_and_sold_out() -> None:
    base_i = [inst("GN7.2XLARGE32", "ap-guangzhou-6"), inst("GT4.41XLARGE948", "ap-guangzhou-6"),
              inst("GN10X.2XLARGE40", "ap-guangzhou-3")]
    base_p = [price("GN7.2XLARGE32", 8.0, "ap-guangzhou", source=API)]
    fresh_i = [fresh_inst("GN7.2XLARGE32", "ap-guangzhou-6"), fresh_inst("GT4.41XLARGE948", "ap-guangzhou-6", "sold_out"),
               fresh_inst("GN7.LARGE20", "ap-guangzhou-6", gpu_count=0.25, gpu_memory_gib=4)]
    fresh_p = [api_price("GN7.2XLARGE32", 10.0, "ap-guangzhou")]
    m = merge(base_i, base_p, fresh_i, fresh_p, GZ)
    diff = compute_diff(base_i, m.instances, base_p, m.prices, fresh_p, m.stale_price_reasons,
                        synced={"tencent": ("ap-guangzhou",)})
    out = diff_to_json(diff)
    assert [r["instance_type"] for r in out["new_instances"]] == ["GN7.LARGE20"]
    assert [r["instance_type"] for r in out["removed_instances"]] == ["GN10X.2XLARGE40"]
    assert [r["instance_type"] for r in out["newly_sold_out"]] == ["GT4.41XLARGE948"]
    [change] = out["price_changes"]
    assert (change["old_cny"], change["new_cny"], change["change_pct"]) == (8.0, 10.0, 25.0)
