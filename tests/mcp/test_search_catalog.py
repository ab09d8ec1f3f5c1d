"""search_catalog answers the catalog query (service/planner/catalog_view.py) compactly: a text line per instance
with the price it was sorted on, its date and confidence; small structured rows; the same filters and sort as GET
/v1/catalog/instances and `catalog list`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from mcp import types

from service.catalog.loader import Catalog
from service.planner.catalog_view import CatalogQuery, catalog_rows

Call = Callable[[str, dict[str, Any]], types.CallToolResult]
QUERY = {"gpu": "A100", "min_cards": 8, "rdma": True, "sort": "price-per-tflops"}


def test_the_text_is_one_line_per_row_with_price_date_and_confidence(mcp_call: Call, catalog: Catalog) -> None:
    r = mcp_call("search_catalog", QUERY)
    assert not r.isError, r.content
    out = r.structuredContent
    truth = catalog_rows(catalog, CatalogQuery(**QUERY))
    assert out["matched"] == len(truth) and [x["instance_type"] for x in out["rows"]] == [t.instance_type for t in truth]
    text = r.content[0].text  # type: ignore[union-attr]
    head, *lines = text.splitlines()
    assert head.startswith(f"{len(truth)} instances matched") and "sorted by price-per-tflops" in head
    for t in truth:
        line = next(x for x in lines if x.startswith(f"{t.instance_type} ("))
        p = t.sort_price(None)
        if p is None:
            assert "price on request" in line and t.quote_link in line
        else:  # the price sorted on, per GPU-hour and per TFLOPS-hour, its date and confidence
            assert f"¥{p.price_cny:,.2f}/{p.unit}" in line and f"¥{p.per_tflops_hour_cny:g}/TFLOPS-hour" in line
            assert line.endswith(f"; {p.date_en}; {p.confidence}")


def test_structured_rows_are_small(mcp_call: Call, catalog: Catalog) -> None:
    rows = mcp_call("search_catalog", {"limit": 200}).structuredContent["rows"]
    assert len(rows) == len(catalog.instances)
    # each instance: its shape and one price per billing rule (its source whole), no notes, no false flags: under
    # 2 kB of JSON, and all of them under half of what GET /v1/catalog/instances says
    sizes = [len(json.dumps(r, ensure_ascii=False)) for r in rows]
    full = sum(len(r.model_dump_json()) for r in catalog_rows(catalog))
    assert max(sizes) < 2000 and sum(sizes) < full / 2
    for r in rows:
        assert "note" not in r and set(r["prices"]) <= {"on_demand", "monthly", "spot"}
        for p in r["prices"].values():
            assert set(p) >= {"price_cny", "per_gpu_hour_cny", "per_tflops_hour_cny", "date", "confidence", "source"}


def test_a_long_answer_says_how_many_rows_the_text_left_out(mcp_call: Call) -> None:
    r = mcp_call("search_catalog", {"limit": 100})
    text = r.content[0].text  # type: ignore[union-attr]
    assert len(text) <= 2000 and text.splitlines()[-1].endswith("more in the structured rows")


@pytest.mark.parametrize(("arguments", "check"), [
    ({"billing": "spot"}, lambda r: "spot" in r["prices"]),
    ({"fp8": True, "min_memory_gb": 48}, lambda r: r["fp8"] and r["gpu_memory_gib"] >= 48),
    ({"cloud": "jdcloud", "rdma": False}, lambda r: r["cloud"] == "jdcloud" and not r["rdma"]),
])
def test_the_same_filters(mcp_call: Call, arguments: dict[str, Any], check: Callable[[dict[str, Any]], bool]) -> None:
    rows = mcp_call("search_catalog", arguments).structuredContent["rows"]
    assert rows and all(check(r) for r in rows)


def test_gpus_and_prices_take_the_filters_too(mcp_call: Call) -> None:
    gpus = mcp_call("search_catalog", {"kind": "gpus", "rdma": True}).structuredContent["rows"]
    assert gpus and all(g["sold_as"] for g in gpus)  # GPUs sold as an RDMA instance
    prices = mcp_call("search_catalog", {"kind": "prices", "min_cards": 8, "billing": "on_demand"})
    assert all(p["gpu_count"] >= 8 and p["billing"] == "on_demand" for p in prices.structuredContent["rows"])


def test_a_bad_sort_is_a_tool_error_naming_it(mcp_call: Call) -> None:
    r = mcp_call("search_catalog", {"sort": "cheapest"})
    assert r.isError and "sort:" in r.content[0].text  # type: ignore[union-attr]
