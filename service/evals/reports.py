"""Write a run's reports: results.json (the --json object), report.md and report.html, into one directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from service.evals import history
from service.evals.dataset import EVALS_DIR
from service.evals.report_html import render_html
from service.evals.report_md import render_markdown
from service.evals.runner import EvalRun

REPORTS_DIR = EVALS_DIR / "reports"


def default_out_dir(run: EvalRun) -> Path:
    return REPORTS_DIR / run.run_id


def write_reports(run: EvalRun, out_dir: Path, history_file: Path | None = None,
                  feedback: dict[str, Any] | None = None) -> dict[str, Path]:
    """The three files; the HTML page's trend chart reads the history (which already holds this run). `feedback`
    (service.evals.feedback.feedback_counts) adds people's 👍/👎 per question type."""
    data = run.to_dict()
    if feedback is not None:
        data["feedback"] = feedback
    rows = history.read(history_file) if history_file is not None else []
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": out_dir / "results.json", "markdown": out_dir / "report.md", "html": out_dir / "report.html"}
    paths["json"].write_text(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n", encoding="utf-8")
    paths["markdown"].write_text(render_markdown(data), encoding="utf-8")
    paths["html"].write_text(render_html(data, rows), encoding="utf-8")
    return paths
