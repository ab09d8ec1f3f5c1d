"""The calibration harness end to end on the CPU (tiny config), and the user calibration file the engine applies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from service.calibration import store
from service.calibration.store import CalibrationRow, calibration_factors, factors, save_row
from service.cli.app import build_app
from service.sizing.throughput import training_time
from service.sizing.types import TrainSetup


def _row(gpu: str, measured: float, estimated: float) -> CalibrationRow:
    return CalibrationRow(gpu=gpu, model="Qwen2-7B", method="lora", seq_len=2048, measured_tokens_per_s=measured,
                          estimated_tokens_per_s=estimated, measured_max_reserved_gib=20.0,
                          measured_max_allocated_gib=18.0, estimated_gib=19.0, date="2026-12-01")


def test_calibrate_runs_a_tiny_model_on_the_cpu_and_refuses_to_save_it(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("peft")
    monkeypatch.setenv("GPU_ADVISOR_DATA_DIR", str(tmp_path))
    from service.settings import get_settings

    get_settings.cache_clear()
    runner = CliRunner()
    app = build_app()
    args = ["calibrate", "--model", "Qwen2-7B", "--method", "lora", "--seq-len", "32", "--steps", "1"]
    r = runner.invoke(app, [*args, "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["measured"]["tokens_per_s"] > 0 and out["seq_len"] == 32
    assert out["estimate"]["tokens_per_s"] is None and "not a calibration row" in out["note"]  # no fake GPU row
    bad = runner.invoke(app, [*args, "--save"])
    assert bad.exit_code == 2 and "Nothing to save" in bad.output
    assert not (tmp_path / "calibration.json").exists()
    get_settings.cache_clear()


def test_calibration_rows_round_trip_and_give_a_median_factor(tmp_path: Path) -> None:
    path = tmp_path / "calibration.json"
    save_row(_row("A100-80G-SXM", 3000, 2000), path)
    save_row(_row("A100-80G-SXM", 2400, 2000), path)
    assert save_row(_row("H20", 100, 1000), path) == 3
    assert factors(store.load_rows(path)) == {"A100-80G-SXM": pytest.approx(1.35), "H20": 0.25}  # bounded
    assert calibration_factors(path)["A100-80G-SXM"] == pytest.approx(1.35)
    path.write_text("{broken", encoding="utf-8")
    assert store.load_rows(path) == []  # a broken user file never breaks planning


def test_the_engine_applies_a_calibration_factor(model, gpu) -> None:
    m, g = model("Qwen2-7B"), gpu("A100 80G")
    setup = TrainSetup("lora", seq_len=4096)
    base = training_time(m, g, setup, 1e9, 1)
    faster = training_time(m, g, setup, 1e9, 1, calibration=1.5)
    assert base.throughput_tokens_per_s < faster.throughput_tokens_per_s < 1.5 * base.throughput_tokens_per_s
