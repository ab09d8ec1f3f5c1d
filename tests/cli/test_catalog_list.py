"""`gpu-advisor catalog list` runs the catalog query (filters, --sort) and prints it at 80 (and 100) columns: every instance
name whole, each price with ¥/GPU-h, ¥/TFLOPS-h, its date (or when an undated page was captured), its
confidence and a numbered source listed under the table."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from service.cli import render
from service.cli.layout import Out

ADDRESS = re.compile(r"https://|knowledge/sources\.md")


@pytest.fixture(params=[80, 100], ids=lambda w: f"COLUMNS={w}")
def at80(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> io.StringIO:
    """A terminal 80 (or 100) columns wide; the output's width is read back from it."""
    out = io.StringIO()
    out.width = request.param  # type: ignore[attr-defined]
    monkeypatch.setattr(render, "output", lambda: Out(request.param, Console(width=request.param, file=out,
                                                                           color_system=None)))
    return out


def run(app: typer.Typer, *args: str) -> Callable[[], list[dict]]:
    result = CliRunner().invoke(app, ["catalog", "list", *args])
    assert result.exit_code == 0, result.output
    return lambda: json.loads(CliRunner().invoke(app, ["catalog", "list", *args, "--json"]).output)


@pytest.mark.parametrize("args", [
    ["--min-cards", "8", "--rdma", "--sort", "price-per-tflops"],  # the HCC clusters, one price on request
    ["--gpu", "A100"],  # every A100 SKU, an undated official page among them
    ["--cloud", "jdcloud", "--billing", "monthly", "--sort", "price"],
    ["--fp8", "--min-memory-gb", "48"],
])
def test_the_table_at_80_and_100_columns(app: typer.Typer, at80: io.StringIO, args: list[str]) -> None:
    rows = run(app, *args)()
    text = at80.getvalue()
    lines = text.splitlines()
    assert rows and max(len(line) for line in lines if not ADDRESS.search(line)) <= at80.width  # type: ignore[attr-defined]
    tokens = [tok for line in lines for tok in line.split()]
    # every name whole, in the query's order
    names = [r["instance_type"] for r in rows]
    assert [t for t in tokens if t in names] == names
    assert not [t for t in tokens if t not in names and len(t) >= 4 and any(n.startswith(t.rstrip("…")) for n in names)]
    # each price shown (the billing asked, else on-demand and monthly at 80 columns) with its date; each source
    # numbered once under the table
    shown = [args[args.index("--billing") + 1]] if "--billing" in args else ["on_demand", "monthly"]
    for r in rows:
        for p in r["prices"]:
            if p["planner_uses"] and not p["on_request"] and p["billing"] in shown:
                date = p["as_of"] or p["captured"]
                assert date in text and f"¥{p['per_gpu_hour_cny']:,.2f}/GPU-h" in text
    sources = [line for line in lines if re.match(r"\[\d+\] ", line)]
    assert sources and len(sources) == len(set(sources))
    if any(r["price_on_request"] for r in rows):
        assert "price on request" in text and "https://buy.cloud.tencent.com" in text


def test_an_undated_page_says_its_age_and_when_it_was_captured(app: typer.Typer, at80: io.StringIO) -> None:
    # issue 39: the 价格总览 page's prices are about 2021 (it lists GT4, not PNV4), read 2026-12-01
    run(app, "--gpu", "A100", "--cloud", "tencent", "--billing", "on_demand")
    lines = at80.getvalue().splitlines()
    head = next((line for line in lines if "on-demand ¥" in line), "")  # a table: read the price column alone
    col = head.index("on-demand ¥") if head else 0
    flat = " ".join(" ".join(line[col:] for line in lines).split())
    assert ("list price from a ~2021 price page; it may have changed, check the cloud's official price calculator "
            "· captured 2026-12-01 · official") in flat


@pytest.mark.parametrize(("args", "named"), [
    (["--sort", "cheapest"], "sort:"),
    (["--billing", "yearly"], "billing:"),
    (["--min-cards", "0"], "min_cards:"),
    (["--cloud", "aws"], "cloud:"),
    (["--gpu", "A1000"], "Did you mean"),
])
def test_bad_values_are_one_line_naming_the_option(app: typer.Typer, args: list[str], named: str) -> None:
    result = CliRunner().invoke(app, ["catalog", "list", *args])
    assert result.exit_code == 2 and named in result.output


@pytest.mark.parametrize(("instance", "year"), [("GN7.2XLARGE32", 2021), ("GT4.4XLARGE96", 2021),
                                                ("p.n1v100.2xlarge", 2018)])
def test_catalog_show_says_an_old_list_price_s_age(cli: Any, instance: str, year: int) -> None:
    # issue 39: `catalog show` of an instance whose only official price is on an old list page
    out = json.loads(cli("catalog", "show", instance, "--json").stdout)
    listed = next(p for p in out["prices"] if p["billing"] == "on_demand" and p["confidence"] == "official")
    assert listed["date_en"].startswith(f"list price from a ~{year} price page; it may have changed, check the "
                                        "cloud's official price calculator")
    assert listed["date_zh"].startswith(f"刊例价来自约 {year} 年的价格页，可能已调整，请以官网价格计算器为准")
    plain = " ".join(cli("catalog", "show", instance).stdout.split())
    assert f"list price from a ~{year} price page" in plain
