"""People's 👍/👎 per question type in the eval report, read from a deployment's data dir (issue 23)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.assistant.db import SqliteDatabase
from service.assistant.sessions import SessionStore, TurnRecord
from service.errors import InvalidInputError
from service.evals.feedback import feedback_counts
from service.evals.metrics import aggregate
from service.evals.reports import write_reports
from service.evals.runner import EvalRun


def rated_data_dir(root: Path) -> Path:
    store = SessionStore(SqliteDatabase(root / "sessions.sqlite"))
    for seq, intent in enumerate(("plan", "plan", "knowledge"), start=1):
        store.append("s1", None, TurnRecord(user="q", assistant="a", result={"intent": intent}))
        store.rate("s1", seq, "down" if seq == 2 else "up", "U1", "slack")
    store.db.close()
    return root


def test_counts_per_intent_from_a_data_dir(tmp_path: Path) -> None:
    counts = feedback_counts(rated_data_dir(tmp_path))
    assert counts["by_intent"] == {"knowledge": {"up": 1, "down": 0}, "plan": {"up": 1, "down": 1}}
    assert counts["total"] == {"up": 2, "down": 1} and "sessions.sqlite" in counts["source"]


def test_a_data_dir_without_a_store_is_an_error_not_zero(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="No session store"):
        feedback_counts(tmp_path / "empty")
    assert not (tmp_path / "empty").exists()  # nothing was created there


def test_the_report_shows_feedback_only_when_given(tmp_path: Path) -> None:
    run = EvalRun("r1", "t1", "in-process:offline", [], aggregate([]))
    plain = write_reports(run, tmp_path / "plain", tmp_path / "h.jsonl")
    assert "User feedback" not in plain["markdown"].read_text(encoding="utf-8")
    paths = write_reports(run, tmp_path / "out", tmp_path / "h.jsonl", feedback_counts(rated_data_dir(tmp_path)))
    md = paths["markdown"].read_text(encoding="utf-8")
    html = paths["html"].read_text(encoding="utf-8")
    assert "## User feedback" in md and "| plan | 1 | 1 | 0.500 |" in md and "| all | 2 | 1 | 0.667 |" in md
    assert "<h2>User feedback</h2>" in html and "knowledge" in html


def test_the_eval_command_reads_feedback_before_it_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from service.cli.app import build_app
    from service.settings import get_settings

    monkeypatch.setenv("GPU_ADVISOR_DATA_DIR", str(tmp_path / "data"))
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(build_app(), ["eval", "--feedback-data-dir", str(tmp_path / "nowhere"),
                                                  "--no-retrieval", "--no-anchors", "--no-history"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code != 0 and "No session store" in result.output
    assert "[  1/" not in result.output  # no scenario was asked
