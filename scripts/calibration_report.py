"""Engine vs measured training runs (evals/anchors.yaml, kinds measured_memory / measured_throughput), on a terminal.

Prints the mean absolute relative error (MAE), the signed mean (bias = mean of (estimate - measured) / measured)
and the worst row, fitted and held-out rows apart, by method, GPU, scale and context length, with the one-line
rules on the same rows beside ours. The same rows, with fitcheck-llm beside them, make docs/validation.md
(scripts/validation_report.py); both read service/evals/validation.py.

Usage: python scripts/calibration_report.py [--anchors evals/anchors.yaml] [--rows] [--split fitted|held-out]
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from service.catalog.loader import load_catalog  # noqa: E402
from service.evals.anchors import DEFAULT_ANCHORS, load_anchors  # noqa: E402
from service.evals.validation import GROUPS, Row, rows_from_anchors, stats  # noqa: E402


def _line(name: str, rows: list[Row]) -> str:
    ours = stats([e for r in rows if (e := r.ours_err) is not None])
    rule = stats([e for r in rows if (e := r.rule_err) is not None])
    if ours is None:
        return f"  {name:34s} {0:4d}"
    return (f"  {name:34s} {ours.n:4d} {ours.mae:8.1f} {ours.bias:+8.1f} {ours.worst:8.1f} "
            f"{rule.mae if rule else 0:9.1f} {rule.bias if rule else 0:+9.1f}")


def report(rows: list[Row], label: str) -> None:
    print(f"\n{label}: engine vs measured (error = (estimate - measured) / measured, %)")
    print(f"  {'group':34s} {'rows':>4s} {'ours MAE':>8s} {'ours bias':>8s} {'ours max':>8s} {'rule MAE':>9s} "
          f"{'rule bias':>9s}")
    print(_line("all", rows))
    for key, group in GROUPS.items():
        by: dict[str, list[Row]] = defaultdict(list)
        for r in rows:
            by[group(r)].append(r)
        for g in sorted(by):
            print(_line(f"{key}: {g}", by[g]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--anchors", type=Path, default=DEFAULT_ANCHORS)
    parser.add_argument("--rows", action="store_true", help="print every row")
    parser.add_argument("--split", choices=("fitted", "held-out"), help="only these rows")
    args = parser.parse_args()
    cat = load_catalog(REPO / "knowledge")
    rows = [r for r in rows_from_anchors(load_anchors(args.anchors), cat)
            if args.split is None or r.case.split == args.split]
    for label, sub in (("memory per GPU", [r for r in rows if r.is_memory]),
                       ("throughput per GPU", [r for r in rows if r.is_throughput])):
        if not sub:
            continue
        report(sub, label)
        if args.rows:
            for r in sub:
                err = f"{r.ours_err:+6.1%}" if r.ours_err is not None else "   n/a"
                print(f"    {r.id:55s} measured {r.case.measured or 0:9.2f} ours {r.ours.engine or 0:9.2f} ({err})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
