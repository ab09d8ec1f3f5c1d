"""Fold measured training runs (the evals/training_runs.yaml format) into evals/anchors.yaml.

Each row becomes one anchor of kind measured_memory / measured_throughput / measured_oom, with its source, source
group, the figure as written (`measured`), the figure normalised (`published`: GiB per GPU on the row's memory
basis, tokens/s per GPU, or MFU; the card's size for an OOM row) and the row's settings (`inputs.run`; what the
row leaves unset is filled from the framework's defaults when it is evaluated). The role follows the split fixed
by source before any fitting (service/evals/runs.py `held_out`): calibration for fitted sources, validation for
held-out ones. The block between the markers is replaced; everything else in the file is kept.

Usage: python scripts/import_training_runs.py PATH/training_runs.yaml [--anchors evals/anchors.yaml]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from service.catalog.loader import load_catalog  # noqa: E402
from service.evals.anchors import DEFAULT_ANCHORS  # noqa: E402
from service.evals.runs import RunRow, held_out, make_case  # noqa: E402

BEGIN = "  # --- BEGIN measured training runs (scripts/import_training_runs.py; do not edit by hand) ---"
END = "  # --- END measured training runs ---"
RUN_KEYS = ("model", "arch", "gpu", "gpus", "nodes", "framework", "method", "zero_stage", "offload", "precision",
            "optimizer", "grad_ckpt", "lora_targets", "lora_rank", "attention", "loss", "seq_len", "micro_batch",
            "extra", "assumed")
KIND = {"memory": "measured_memory", "throughput": "measured_throughput", "oom": "measured_oom"}
UNIT = {"allocated": "GiB", "reserved": "GiB", "device": "GiB", "tokens_per_gpu": "tokens/s/GPU", "mfu": "MFU",
        "oom": "GiB (card)"}


def anchor(row: RunRow, catalog: Any) -> dict[str, Any]:
    case = make_case(row, catalog)
    if case.basis == "oom":
        published = case.capacity_gib or 1.0
    else:
        published = case.measured if case.measured else float(row.measured.value or 1.0)
    run = {k: getattr(row, k) for k in RUN_KEYS if getattr(row, k) not in (None, [], {})}
    out: dict[str, Any] = {
        "id": row.id, "kind": KIND[row.kind], "role": "validation" if held_out(row.source_group) else "calibration",
        "source": row.source, "source_group": row.source_group, "published": round(float(published), 4),
        "unit": UNIT[case.basis], "tolerance": {"rel": 0.5},
        "measured": {"value": row.measured.value, "unit": row.measured.unit},
        "note": " ".join(row.note.split())[:400], "inputs": {"run": run},
    }
    if row.kind == "memory":
        out["memory_kind"] = row.measured.memory_kind or "peak-unknown"
    return out


def render(anchors: list[dict[str, Any]]) -> str:
    lines = [BEGIN, "  # One anchor per row of the measured-runs collection; role = the source's fixed split."]
    for a in anchors:
        text = yaml.safe_dump([a], allow_unicode=True, sort_keys=False, width=110, default_flow_style=None)
        lines += ["  " + line if line else line for line in text.rstrip("\n").split("\n")]
    lines.append(END)
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path)
    parser.add_argument("--anchors", type=Path, default=DEFAULT_ANCHORS)
    args = parser.parse_args()
    catalog = load_catalog(REPO / "knowledge")
    rows = [RunRow.model_validate(r) for r in yaml.safe_load(args.runs.read_text(encoding="utf-8"))["runs"]]
    block = render([anchor(r, catalog) for r in rows])
    text = args.anchors.read_text(encoding="utf-8")
    if BEGIN in text:
        head, rest = text.split(BEGIN, 1)
        text = head + block + rest.split(END + "\n", 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    args.anchors.write_text(text, encoding="utf-8")
    print(f"{len(rows)} runs folded into {args.anchors}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
