"""The expected error a figure carries (its class in the validation matrix) and the fit verdict's band."""

from __future__ import annotations

import pytest

from service.sizing import expected_error as ee
from service.sizing.memory import estimate_memory
from service.sizing.types import TrainSetup
from service.sizing.verdict import BAND_OF_ERROR, TIGHT_MAX, TIGHT_SHARE, fit_verdict
from tests.sizing.specs import decoder, moe_decoder

# A tiny synthetic matrix (rows, MAE %, bias %, held-out apart), one case per fallback rule
TABLE = {
    "memory": {
        "all": {"rows": 100, "mae": 17.0, "bias": 1.0, "held_out_rows": 10, "held_out_mae": 30.0},
        "lora": {"rows": 30, "mae": 12.0, "bias": -5.0, "held_out_rows": 2, "held_out_mae": 40.0},
        "qlora": {"rows": 20, "mae": 15.0, "bias": 0.0, "held_out_rows": 4, "held_out_mae": 35.0},
        "qlora sharded (fsdp)": {"rows": 1, "mae": 60.0, "bias": -60.0, "held_out_rows": 0, "held_out_mae": None},
        "full sharded (ZeRO-3)": {"rows": 9, "mae": 18.0, "bias": -2.0, "held_out_rows": 0, "held_out_mae": None},
    },
    "throughput": {
        "all": {"rows": 80, "mae": 19.0, "bias": -2.0, "held_out_rows": 13, "held_out_mae": 22.0},
        "MoE": {"rows": 1, "mae": 300.0, "bias": 300.0, "held_out_rows": 0, "held_out_mae": None},
    },
}


@pytest.fixture(autouse=True)
def table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ee, "ERROR_TABLE", TABLE)


@pytest.mark.parametrize(
    ("kind", "setup", "moe", "klass", "pct", "rows"),
    [
        # a class of its own: 30 runs; its 2 held-out runs are too few to overrule it
        ("memory", TrainSetup("lora"), False, "lora", 12.0, 30),
        # 4 held-out runs that read worse: the held-out error stands
        ("memory", TrainSetup("qlora", quant_bits=4), False, "qlora", 35.0, 20),
        # one measured run: falls back to its method (35 %), pulled up by that run's 60 % by 1/5: 40 %
        ("memory", TrainSetup("qlora", quant_bits=4, n_gpus=2, zero_stage=3, sharding="fsdp"), False, "qlora",
         40.0, 20),
        ("memory", TrainSetup("full", n_gpus=8, zero_stage=3), False, "full sharded (ZeRO-3)", 18.0, 9),
        # no class, no method: all runs, held-out worse
        ("memory", TrainSetup("freeze"), False, "all", 30.0, 100),
        # MoE throughput: one run of 300 %, falls back to all runs (22 % held-out) pulled up by 1/5: 77.6 %
        ("throughput", TrainSetup("full"), True, "all", 77.6, 80),
    ],
)
def test_class_and_fallback(kind: ee.ErrorKind, setup: TrainSetup, moe: bool, klass: str, pct: float,
                            rows: int) -> None:
    got = ee.expected_error(kind, setup, moe_decoder() if moe else decoder())
    assert got is not None
    assert (got.klass, got.rows) == (klass, rows)
    assert got.pct == pytest.approx(pct)


def test_label_in_both_languages() -> None:
    got = ee.expected_error("memory", TrainSetup("lora"))
    assert got is not None
    assert got.label("zh") == "±12 %（同类实测 30 条）"
    assert got.label("en") == "±12 % (30 measured runs of its class)"


def test_memory_and_time_results_carry_it() -> None:
    mem = estimate_memory(decoder(), TrainSetup("lora"))
    assert mem.expected_error is not None and mem.expected_error.klass == "lora"
    d = mem.as_dict()
    assert (d["expected_error_pct"], d["expected_error_rows"], d["expected_error_class"]) == (12.0, 30, "lora")


@pytest.mark.parametrize(
    ("need", "pct", "status"),
    [
        (94.0, None, "fits"),  # no class known: the 5 % band (tight above 95 of 100)
        (96.0, None, "tight"),
        (93.0, 12.0, "fits"),  # a class read to 12 %: half of it, tight above 94
        (95.0, 12.0, "tight"),
        (89.0, 40.0, "fits"),  # the band is capped at 10 %: tight above 90
        (91.0, 40.0, "tight"),
        (101.0, 12.0, "does_not_fit"),
    ],
)
def test_verdict_band_follows_the_expected_error(need: float, pct: float | None, status: str) -> None:
    e = None if pct is None else ee.ExpectedError("memory", "x", pct, 10, None, 0, 0.0)
    v = fit_verdict(need, 100.0, e)
    assert v.status == status
    band = TIGHT_SHARE if pct is None else min(TIGHT_MAX, max(TIGHT_SHARE, BAND_OF_ERROR * pct / 100))
    assert v.band_pct == pytest.approx(100 * band)
