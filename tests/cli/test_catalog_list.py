"""`gpu-advisor catalog list` runs the catalog query (filters, --sort) and prints it at 80 (and 100) columns: every instance
name whole, each price with ¥/GPU-h, ¥/TFLOPS-h, its date (or when an undated page was captured), its
confidence and a numbered source listed under the table."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable

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


def test_an_undated_page_says_when_it_was_captured(app: typer.Typer, at80: io.StringIO) -> None:
    run(app, "--gpu", "A100", "--cloud", "tencent", "--billing", "on_demand")
    flat = " ".join(at80.getvalue().split())
    assert "page undated · captured 2026-12-01 · official" in flat


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
