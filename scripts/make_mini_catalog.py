"""Write tests/fixtures/mini_knowledge: a small synthetic catalog (7 GPUs, 7 instances, round prices, 6 models: three
dense decoders, an MoE, an MLA model and a vision-language model) for the tests of queries, question types, the
cause model and the spine, so that a price fix in the shipped data moves none of them.

The GPU, instance and model rows are copied from knowledge/ (their facts stay sourced); every price is synthetic
(round numbers, `confidence: estimate`, the source this script), dated 2026-11-01. Rerun after a schema change:

    python scripts/make_mini_catalog.py
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "knowledge"
OUT = ROOT / "tests" / "fixtures" / "mini_knowledge"
SOURCE = "scripts/make_mini_catalog.py"

GPUS = ("A10", "L20", "A100-40G-SXM", "H800-SXM", "V100-32G-SXM2", "RTX-4090", "ASCEND-910B2")
INSTANCES = ("PNV4.7XLARGE116", "PNV4.28XLARGE466", "PNV5b.64XLARGE768", "GT4.41XLARGE948", "HCCPNV5",
             "p.n1v100.2xlarge", "p.n1v100.10xlarge")
MODELS = ("Qwen2-7B", "Qwen2.5-14B", "Qwen2-72B", "Qwen3-30B-A3B", "DeepSeek-V2-Lite", "Qwen2.5-VL-7B")
# instance -> (on-demand ¥/h, monthly ¥/month or None, spot ¥/h or None); HCCPNV5 has no price
PRICES: dict[str, tuple[float | None, float | None, float | None]] = {
    "PNV4.7XLARGE116": (10.0, 4800.0, 5.0),
    "PNV4.28XLARGE466": (40.0, 19200.0, 20.0),
    "PNV5b.64XLARGE768": (160.0, 76800.0, 80.0),
    "GT4.41XLARGE948": (240.0, 115200.0, 120.0),
    "HCCPNV5": (None, None, None),
    "p.n1v100.2xlarge": (20.0, 6000.0, None),
    "p.n1v100.10xlarge": (80.0, 24000.0, None),
}
DATE = "2026-11-01"


def _yaml_rows(path: Path, ids: tuple[str, ...]) -> list[dict[str, object]]:
    rows = yaml.safe_load(path.read_text(encoding="utf-8"))
    by_id = {r["id"]: r for r in rows}
    return [by_id[i] for i in ids]


def _csv(header: list[str], rows: list[dict[str, str]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=header, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def main() -> None:
    (OUT / "catalog").mkdir(parents=True, exist_ok=True)
    head = f"# Synthetic test catalog written by {SOURCE}; do not edit by hand.\n"
    (OUT / "catalog" / "gpus.yaml").write_text(
        head + yaml.safe_dump(_yaml_rows(SRC / "catalog" / "gpus.yaml", GPUS), allow_unicode=True, sort_keys=False),
        encoding="utf-8")
    (OUT / "models.yaml").write_text(
        head + yaml.safe_dump(_yaml_rows(SRC / "models.yaml", MODELS), allow_unicode=True, sort_keys=False),
        encoding="utf-8")
    with (SRC / "catalog" / "instances.csv").open(encoding="utf-8") as f:
        reader = csv.DictReader(f)
        header = list(reader.fieldnames or [])
        rows = [r for r in reader if r["instance_type"] in INSTANCES]
    (OUT / "catalog" / "instances.csv").write_text(_csv(header, rows), encoding="utf-8")
    families = {(r["cloud"], r["family"]) for r in rows}
    with (SRC / "catalog" / "prices.csv").open(encoding="utf-8") as f:
        price_header = list(csv.DictReader(f).fieldnames or [])
    prices: list[dict[str, str]] = []
    for inst, (hourly, monthly, spot) in PRICES.items():
        base = dict.fromkeys(price_header, "")
        base.update(instance_type=inst, source=SOURCE, as_of=DATE, confidence="estimate",
                    note="synthetic test price", note_zh="测试用的虚构价格")
        if hourly is None:  # no price at all, as HCCPNV5 in the shipped data
            continue
        prices.append({**base, "billing": "on_demand", "price_cny": f"{hourly:g}", "unit": "hour"})
        if monthly is not None:
            prices.append({**base, "billing": "monthly", "price_cny": f"{monthly:g}", "unit": "month"})
        if spot is not None:
            prices.append({**base, "billing": "spot", "price_cny": f"{spot:g}", "unit": "hour"})
    (OUT / "catalog" / "prices.csv").write_text(_csv(price_header, prices), encoding="utf-8")
    with (SRC / "catalog" / "billing_rules.csv").open(encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rule_header = list(reader.fieldnames or [])
        rules = [r for r in reader if (r["cloud"], r["family"]) in families]
    (OUT / "catalog" / "billing_rules.csv").write_text(_csv(rule_header, rules), encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(GPUS)} GPUs, {len(rows)} instances, {len(prices)} prices, "
          f"{len(rules)} billing rules, {len(MODELS)} models")


if __name__ == "__main__":
    main()
