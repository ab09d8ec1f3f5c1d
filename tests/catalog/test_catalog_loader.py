"""Loading knowledge files: validation errors name file, line and field; overlays and price sheets supersede."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from service.catalog.loader import load_catalog
from service.errors import CatalogError
from tests.conftest import KNOWLEDGE_DIR


@pytest.fixture()
def knowledge(tmp_path: Path) -> Path:
    """A writable copy of knowledge/ (catalog files and models only)."""
    dst = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE_DIR / "catalog", dst / "catalog")
    shutil.copy(KNOWLEDGE_DIR / "models.yaml", dst / "models.yaml")
    return dst


def _rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


def _write(path: Path, header: list[str], rows: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)


def test_bad_csv_row_names_file_line_and_field(knowledge: Path) -> None:
    path = knowledge / "catalog" / "prices.csv"
    header, rows = _rows(path)
    rows[4]["price_cny"] = "-3"  # the 5th data row sits on line 6 (header is line 1)
    _write(path, header, rows)
    with pytest.raises(CatalogError) as err:
        load_catalog(knowledge)
    assert f"{path}:line 6: field 'price_cny'" in err.value.message
    assert "catalog validate" in err.value.fix


def test_bad_yaml_item_names_the_item(knowledge: Path) -> None:
    path = knowledge / "catalog" / "gpus.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("arch: turing", "arch: turbo", 1), encoding="utf-8")
    with pytest.raises(CatalogError) as err:
        load_catalog(knowledge)
    assert f"{path}:item 3: field 'arch'" in err.value.message  # T4 is the 3rd GPU row


def test_unknown_gpu_reference_is_reported(knowledge: Path) -> None:
    path = knowledge / "catalog" / "instances.csv"
    header, rows = _rows(path)
    rows[0]["gpu"] = "A10X"
    _write(path, header, rows)
    with pytest.raises(CatalogError) as err:
        load_catalog(knowledge)
    assert "unknown GPU 'A10X'" in err.value.message


def test_user_price_sheet_overrides_the_shipped_price(knowledge: Path, tmp_path: Path) -> None:
    sheet = tmp_path / "my_prices.csv"
    header, _ = _rows(knowledge / "catalog" / "prices.csv")
    _write(sheet, header, [{"instance_type": "GT4.4XLARGE96", "billing": "on_demand", "price_cny": "1.23",
                            "unit": "hour", "source": "my quote", "as_of": "2026-11-01", "confidence": "official"}])
    cat = load_catalog(knowledge, prices_file=sheet)
    rows = [p for p in cat.prices if p.instance_type == "GT4.4XLARGE96" and p.billing == "on_demand"]
    assert [(p.price_cny, p.source) for p in rows] == [(1.23, "my quote")]
    assert str(sheet) in cat.origins


def test_synced_overlay_replaces_rows_by_key(knowledge: Path, tmp_path: Path) -> None:
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    header, rows = _rows(knowledge / "catalog" / "instances.csv")
    changed = dict(rows[0], vcpus="99")
    _write(overlay / "instances.csv", header, [changed])
    cat = load_catalog(knowledge, overlay_dir=overlay)
    same = [r for r in cat.instances if r.instance_type == changed["instance_type"]]
    assert len(same) == 1 and same[0].vcpus == 99
    assert len(cat.instances) == len(rows)


@pytest.mark.parametrize(("as_of", "captured", "expected"), [
    ("2020-01-01", "", "stand-in date"),  # the old 'the page has no date' placeholder is refused
    ("", "", "give as_of"),  # a price with no date at all is refused
])
def test_a_price_date_is_the_sources_or_when_it_was_captured(knowledge: Path, as_of: str, captured: str,
                                                             expected: str) -> None:
    path = knowledge / "catalog" / "prices.csv"
    header, rows = _rows(path)
    rows[0].update({"as_of": as_of, "captured": captured})
    _write(path, header, rows)
    with pytest.raises(CatalogError) as err:
        load_catalog(knowledge)
    assert expected in err.value.message


def test_an_undated_page_ages_from_its_content_not_its_capture(knowledge: Path) -> None:
    from service.labels import price_date

    cat = load_catalog(knowledge)
    undated = next(p for p in cat.prices if p.as_of is None and p.confidence == "official")
    assert undated.captured is not None and price_date(None, undated.captured.isoformat(), "zh") == \
        f"页面未注明日期 · 抓取于 {undated.captured}"
    # Tencent's 价格总览 page lists GT4 and not PNV4 (launched 2021-10): its content is about 2021, however recently
    # it was read (issue 39: counted from the 2026-12-01 capture, no staleness warning fired)
    assert undated.content_as_of is not None and undated.dated == undated.content_as_of < undated.captured
    assert undated.content_basis in ("commit", "newest_family") and undated.content_evidence
