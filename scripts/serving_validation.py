"""Write docs/validation-serving.md: the serving engine against measured serving runs (evals/serving_runs.yaml).

Usage: python scripts/serving_validation.py [--runs evals/serving_runs.yaml] [--out docs/validation-serving.md]
       [--check]   (exit 1 when the committed file differs from what the engine gives now)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from service.catalog.loader import load_catalog  # noqa: E402
from service.evals.serving_matrix import evaluate, render_markdown  # noqa: E402
from service.evals.serving_rows import load_runs  # noqa: E402

DEFAULT_OUT = REPO / "docs" / "validation-serving.md"


def build(runs_path: Path) -> str:
    checks, skipped = evaluate(load_runs(runs_path), load_catalog(REPO / "knowledge"))
    return render_markdown(checks, skipped, str(runs_path.resolve().relative_to(REPO)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, default=REPO / "evals" / "serving_runs.yaml")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="compare with the committed file, write nothing")
    args = parser.parse_args()
    text = build(args.runs)
    if args.check:
        same = args.out.is_file() and args.out.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{args.out} is stale: run scripts/serving_validation.py")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
