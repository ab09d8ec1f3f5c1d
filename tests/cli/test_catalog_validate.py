"""`gpu-advisor catalog validate` on the shipped data, on a copy with an official price dated by a third party's
capture, and with a user's price sheet missing its date (issue 39): exit 2, the row and the fix."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path
from typing import Any

import pytest

KNOWLEDGE = Path(__file__).resolve().parents[2] / "knowledge"
GOOD = {"instance_type": "GT4.4XLARGE96", "billing": "on_demand", "price_cny": "25.0", "unit": "hour",
        "source": "quote from our account manager", "as_of": "2026-11-20", "confidence": "official"}


def _sheet(path: Path, *rows: dict[str, str]) -> Path:
    fields = ["instance_type", "billing", "price_cny", "unit", "source", "as_of", "confidence"]
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows({**{k: "" for k in fields}, **r} for r in rows)
    return path


def test_cli_validate_passes_on_shipped_data_and_refuses_a_bad_row(cli: Any, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    ok = cli("catalog", "validate")
    assert ok.exit_code == 0 and ok.stdout.startswith("ok:"), ok.stderr
    bad = _sheet(tmp_path / "mine.csv", {**GOOD, "as_of": ""})
    refused = cli("catalog", "validate", "--prices", str(bad))
    assert refused.exit_code == 2 and "mine.csv line 2 (GT4.4XLARGE96 on_demand): no date" in refused.stderr
    # a copy of the knowledge files with an official price dated by a third party's capture
    from service.settings import get_settings

    knowledge = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE, knowledge)
    prices = knowledge / "catalog" / "prices.csv"
    rows = list(csv.DictReader(prices.open(encoding="utf-8")))
    first = next(r for r in rows if r["confidence"] == "official")
    first.update(as_of="2026-09-15", captured="", content_as_of="2026-09-15", content_basis="capture",
                 content_evidence="")
    with prices.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    monkeypatch.setenv("GPU_ADVISOR_KNOWLEDGE_DIR", str(knowledge))
    get_settings.cache_clear()
    refused = cli("catalog", "validate")
    get_settings.cache_clear()
    assert refused.exit_code == 2
    assert f"prices.csv {first['instance_type']} {first['billing']}: an official price dated by a capture" in \
        refused.stderr
