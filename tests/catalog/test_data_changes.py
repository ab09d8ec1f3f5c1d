"""scripts/data_changes.py lists every catalog row a range of commits changed, with its source (issue 39's audit
list, docs/data-changes-2026-12.md)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "data_changes.py"
HEADER = "instance_type,billing,price_cny,unit,region,source,as_of,confidence,note,note_zh\n"
OLD = {"knowledge/catalog/prices.csv": HEADER + "GT4.4XLARGE96,on_demand,28.64,hour,,https://a,,official,old,旧\n"
                                                "GN7.LARGE20,on_demand,6.94,hour,,https://b,,official,,\n"}
NEW = {"knowledge/catalog/prices.csv": HEADER + "GT4.4XLARGE96,on_demand,30.10,hour,,https://c,,official,new,新\n"
                                                "PNV4.7XLARGE116,on_demand,19.5,hour,,https://d,,official,,\n"}


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("data_changes", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "_show", lambda rev, path: (OLD if rev == "base" else NEW).get(path, ""))
    return module


def test_each_row_is_added_removed_or_changed_with_its_source(script: ModuleType) -> None:
    lines = script.table("base", "head", "prices", script.TABLES["prices"])
    rows = [ln for ln in lines if ln.startswith("| ") and not ln.startswith("| row")]
    assert len(rows) == 3
    changed = next(r for r in rows if "GT4.4XLARGE96" in r)
    assert "changed" in changed and "price_cny: 28.64 → 30.10" in changed and "https://c" in changed
    assert "note" not in changed.split("|")[3]  # wording is not a figure
    assert any("GN7.LARGE20" in r and "removed" in r and "https://b" in r for r in rows)
    assert any("PNV4.7XLARGE116" in r and "added" in r and "https://d" in r for r in rows)
