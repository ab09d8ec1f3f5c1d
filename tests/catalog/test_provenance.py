"""`gpu-advisor catalog validate` passes on the shipped data and refuses each bad row kind (issue 39): an official price
dated by someone else's capture, an estimate with a date but no anchor, a user-facing source that is not a public
URL; and a user's price sheet with a row that has no date, no source or an impossible price, naming the row and the
fix. Nothing is silently dated."""

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from service.catalog.loader import Catalog, load_catalog
from service.catalog.provenance import is_public_url, price_problems, source_problems, user_sheet_problems
from service.catalog.schema import PriceRow
from service.errors import CatalogError

KNOWLEDGE = Path(__file__).resolve().parents[2] / "knowledge"
TODAY = date(2026, 12, 6)
PAGE = "https://github.com/tencentyun/qcloud-documents/blob/8ec0729/product/价格总览.md"


def _row(**kw: Any) -> PriceRow:
    base: dict[str, Any] = {"instance_type": "GT4.4XLARGE96", "billing": "on_demand", "price_cny": 28.64,
                            "unit": "hour", "source": PAGE, "captured": date(2026, 12, 1), "confidence": "official",
                            "content_as_of": date(2021, 9, 30), "content_basis": "newest_family",
                            "content_evidence": "lists GT4, not PNV4 (2021-10)"}
    base.update(kw)
    return PriceRow.model_validate(base)


def test_the_shipped_catalog_has_no_provenance_problem(catalog: Catalog) -> None:
    assert price_problems(catalog.prices, TODAY) == []
    assert source_problems(catalog.instances, catalog.billing_rules) == []
    # and what issue 39 counted is gone: no official row dated by a third party, no repository path shown
    assert not [p for p in catalog.prices if p.confidence == "official" and p.content_basis in ("capture", "anchor")]
    assert not [p for p in catalog.prices if p.confidence == "official" and p.as_of is not None]
    assert all(is_public_url(r.source) for r in [*catalog.prices, *catalog.instances, *catalog.billing_rules])


@pytest.mark.parametrize(("row", "said"), [
    # GN10Xp.2XLARGE40 / GN7.2XLARGE32: the list price carried the 2026-09-15 capture's date
    (dict(as_of=date(2026, 9, 15), captured=None, content_as_of=date(2026, 9, 15), content_basis="capture",
          content_evidence=""), "an official price dated by a capture"),
    # the 8 JD slice estimates: a date and no basis for it
    (dict(confidence="estimate", instance_type="p.c1p40g.large", as_of=date(2026, 9, 15), captured=None,
          content_as_of=None, content_basis=None, content_evidence=""), "an estimate with a date but no anchor"),
    (dict(source="knowledge/sources.md#CBM-2026-08"), "is not a public URL"),
    (dict(source="see the sales sheet"), "is not a public URL"),
    (dict(source="http://127.0.0.1:8000/prices"), "is not a public URL"),
    (dict(content_as_of=None, content_basis=None, content_evidence=""), "an undated official page with no content age"),
    (dict(confidence="third_party", captured=None, as_of=None, content_as_of=date(2026, 9, 15),
          content_basis="capture", content_evidence="x", promo=True), "without its date"),
    (dict(captured=date(2027, 5, 1)), "is in the future"),
])
def test_each_bad_row_kind_is_refused_with_its_row_and_fix(row: dict[str, Any], said: str) -> None:
    if row.get("as_of") is None and row.get("captured") is None:
        row = {**row, "captured": date(2026, 12, 1)} if row.get("confidence") != "third_party" else row
    try:
        bad = _row(**row)
    except ValueError:  # the schema refuses it first (a row with no date at all)
        return
    problems = price_problems([bad], TODAY)
    assert any(said in p for p in problems), problems
    hit = next(p for p in problems if said in p)
    assert hit.startswith(f"prices.csv {bad.instance_type} {bad.billing}")  # the row
    assert len(hit.split(". ", 1)) == 2  # and what to do


def test_an_estimate_is_as_old_as_its_anchor_row() -> None:
    listed = _row()
    spot = _row(billing="spot", price_cny=14.32, confidence="estimate", anchor="GT4.4XLARGE96 on_demand")
    assert price_problems([listed, spot], TODAY) == []
    young = _row(billing="spot", price_cny=14.32, confidence="estimate", anchor="GT4.4XLARGE96 on_demand",
                 content_as_of=date(2026, 9, 15), content_basis="anchor", content_evidence="")
    assert any("is dated 2021-09-30" in p for p in price_problems([listed, young], TODAY))
    orphan = _row(billing="spot", price_cny=14.32, confidence="estimate", anchor="GT4.9XLARGE1 on_demand")
    assert any("is not a row of prices.csv" in p for p in price_problems([listed, orphan], TODAY))


def _sheet(path: Path, *rows: dict[str, str]) -> Path:
    fields = ["instance_type", "billing", "price_cny", "unit", "source", "as_of", "confidence"]
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows({**{k: "" for k in fields}, **r} for r in rows)
    return path


GOOD = {"instance_type": "GT4.4XLARGE96", "billing": "on_demand", "price_cny": "25.0", "unit": "hour",
        "source": "quote from our account manager", "as_of": "2026-11-20", "confidence": "official"}


@pytest.mark.parametrize(("change", "said"), [
    ({"as_of": ""}, "no date: add as_of, the date of your quote"),
    ({"source": ""}, "no source: add source"),
    ({"price_cny": "-3"}, "is not a price above zero"),
    ({"price_cny": "abc"}, "is not a price above zero"),
    ({"price_cny": "nan"}, "is not a price above zero"),
    ({"price_cny": "2864000"}, "is not a plausible instance price"),
    ({"as_of": "2027-01-01"}, "is in the future"),
    ({"as_of": "last week"}, "is not a date"),
    ({"unit": "month"}, "needs unit hour"),
    ({"instance_type": "GT4.4XLARGE9"}, "no instance type 'GT4.4XLARGE9'"),
])
def test_a_bad_user_sheet_row_is_refused_naming_the_line_and_the_fix(tmp_path: Path, change: dict[str, str],
                                                                    said: str) -> None:
    sheet = _sheet(tmp_path / "mine.csv", {**GOOD, "billing": "monthly", "unit": "month", "price_cny": "12000"},
                   {**GOOD, **change})
    problems = user_sheet_problems(sheet, {"GT4.4XLARGE96"}, TODAY)
    assert len(problems) >= 1 and all(p.startswith("mine.csv line 3 (") for p in problems), problems
    assert any(said in p for p in problems), problems
    with pytest.raises(CatalogError) as err:  # and the catalog refuses to load it: nothing is silently dated
        load_catalog(KNOWLEDGE, prices_file=sheet)
    assert said in err.value.message and "catalog validate --prices" in err.value.fix


def test_a_good_user_sheet_passes(tmp_path: Path) -> None:
    sheet = _sheet(tmp_path / "mine.csv", GOOD)
    assert user_sheet_problems(sheet, {"GT4.4XLARGE96"}, TODAY) == []
    cat = load_catalog(KNOWLEDGE, prices_file=sheet)
    assert any(p.source == GOOD["source"] and p.price_cny == 25.0 for p in cat.prices)


def test_unsized_rows_need_a_public_url_and_a_name_no_sized_row_has(catalog) -> None:
    from service.catalog.provenance import unsized_problems
    from service.catalog.unsized import UnsizedModel, unsized_models

    assert unsized_problems(unsized_models(), catalog.models) == []  # the shipped list
    bad = UnsizedModel(id="X-1", names=("Qwen3-8B",), why_en="w", why_zh="w", source="owner/repo:config.json@abc")
    problems = unsized_problems([bad], catalog.models)
    assert any("no public URL" in p for p in problems) and any("Qwen3-8B" in p for p in problems)
