"""Engine vs measured training runs (evals/anchors.yaml, kinds measured_memory / measured_throughput).

Prints the mean absolute relative error (MAE), the signed mean (bias = mean of (estimate - measured) / measured)
and the worst row, by method, GPU and context length, with the one-line rules on the same rows beside ours:

- throughput: 6 x N x tokens at 40 % MFU of the dense BF16 peak;
- memory: LLaMA-Factory's README rule (full 18 GB/B params, sharded under ZeRO-3; LoRA 2; QLoRA 4-bit 0.5).

Usage: python scripts/calibration_report.py [--anchors evals/anchors.yaml] [--rows]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from service.catalog.loader import load_catalog  # noqa: E402
from service.evals.anchors import (  # noqa: E402
    DEFAULT_ANCHORS,
    MEASURED,
    Anchor,
    load_anchors,
    measured_engine,
    rule_of_thumb,
)

Row = tuple[Anchor, float, float]  # anchor, engine, rule


def _context(seq: int) -> str:
    return "<=1k" if seq <= 1024 else "2k-4k" if seq <= 4096 else ">=8k"


def _groups(a: Anchor) -> dict[str, str]:
    s = a.inputs["setup"]
    method = str(s["method"]) + (f"+z{s.get('zero_stage', 0)}" if int(a.inputs.get("gpus", 1)) > 1 else "")
    return {"method": method, "gpu": f"{a.inputs['gpu']} x{a.inputs.get('gpus', 1)}",
            "context": _context(int(s["seq_len"]))}


def _err(x: float, ref: float) -> float:
    return (x - ref) / ref


def _line(name: str, rows: list[Row]) -> str:
    ours = [_err(e, a.published) for a, e, _ in rows]
    rule = [_err(r, a.published) for a, _, r in rows]
    mae_o = statistics.mean(abs(x) for x in ours) * 100
    mae_r = statistics.mean(abs(x) for x in rule) * 100
    return (f"  {name:28s} {len(rows):4d} {mae_o:8.1f} {statistics.mean(ours) * 100:+8.1f} "
            f"{max(abs(x) for x in ours) * 100:8.1f} {mae_r:9.1f} {statistics.mean(rule) * 100:+9.1f}")


def report(rows: list[Row], kind: str) -> None:
    label = {"measured_memory": "memory per GPU", "measured_throughput": "tokens/s per GPU"}[kind]
    print(f"\n{label}: engine vs measured (error = (estimate - measured) / measured, %)")
    print(f"  {'group':28s} {'rows':>4s} {'ours MAE':>8s} {'ours bias':>8s} {'ours max':>8s} {'rule MAE':>9s} "
          f"{'rule bias':>9s}")
    print(_line("all", rows))
    for key in ("method", "gpu", "context"):
        by: dict[str, list[Row]] = defaultdict(list)
        for r in rows:
            by[_groups(r[0])[key]].append(r)
        for g in sorted(by):
            print(_line(f"{key}: {g}", by[g]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--anchors", type=Path, default=DEFAULT_ANCHORS)
    parser.add_argument("--rows", action="store_true", help="print every row")
    args = parser.parse_args()
    cat = load_catalog(REPO / "knowledge")
    anchors = [a for a in load_anchors(args.anchors) if a.kind in MEASURED]
    for kind in MEASURED:
        rows = [(a, measured_engine(a, cat), rule_of_thumb(a, cat)) for a in anchors if a.kind == kind]
        if not rows:
            continue
        report(rows, kind)
        if args.rows:
            for a, e, r in rows:
                print(f"    {a.id:45s} measured {a.published:9.1f} ours {e:9.1f} ({_err(e, a.published):+6.1%}) "
                      f"rule {r:9.1f} ({_err(r, a.published):+6.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
