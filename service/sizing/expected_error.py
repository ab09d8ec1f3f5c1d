"""How far off a figure is expected to be: the error of its class in the validation matrix (docs/validation.md).

Every measured run in evals/anchors.yaml is sized by the engine; scripts/validation_report.py groups the errors by
class and writes the table (service/sizing/error_table.py, generated). A memory or time estimate carries its
class's mean absolute error and the number of measured runs behind it, so an answer can say "±15 %（同类实测 23
条）", the fit verdict can widen its tight band to it, and the planner can price the risk.

Classes: memory by method and sharding (the matrix's method groups: "lora", "qlora DDP", "full sharded (ZeRO-3)",
...); throughput the same, with MoE models apart. A class with fewer than MIN_ROWS measured runs falls back to its
method (MoE runs: to all MoE runs), then to all runs of the kind; where the small class reads worse, its error
pulls the wider one up by its share of MIN_ROWS runs (one run of 60 % over a class of 15 %: 24 %). The error is
the mean |error| of all the class's runs, or of its held-out runs where at least MIN_HELD_OUT are held out and
they read worse (never the kinder of the two).
"""

from __future__ import annotations

from service.catalog.schema import ModelSpec
from service.sizing.error_table import ERROR_TABLE
from service.sizing.types import ErrorKind, ExpectedError, TimeEstimate, TrainSetup

MIN_ROWS = 5
MIN_HELD_OUT = 3


def method_class(setup: TrainSetup, gpus: int | None = None) -> str:
    """The matrix's method group of a setup: method, then how its state is spread over the GPUs."""
    n = setup.n_gpus if gpus is None else gpus
    if n > 1 and setup.zero_stage >= 2:
        shard = f"ZeRO-{setup.zero_stage}" if setup.sharding == "deepspeed" else setup.sharding
        return f"{setup.method} sharded ({shard})"
    return setup.method + (" DDP" if n > 1 else "")


def error_class(kind: ErrorKind, setup: TrainSetup, model: ModelSpec | None = None, gpus: int | None = None) -> str:
    base = method_class(setup, gpus)
    if kind == "throughput" and model is not None and model.moe is not None:
        return f"MoE {base}"
    return base


def _fallbacks(kind: ErrorKind, klass: str, setup: TrainSetup) -> list[str]:
    return [klass, "MoE" if klass.startswith("MoE ") else setup.method, "all"]


def expected_error(kind: ErrorKind, setup: TrainSetup, model: ModelSpec | None = None,
                   gpus: int | None = None) -> ExpectedError | None:
    """The class's expected error (None when the matrix holds no runs of the kind at all). A class too small to
    stand alone falls back to a wider one, pulled up by its own runs where they read worse."""
    table = ERROR_TABLE.get(kind, {})
    own: list[tuple[float, int]] = []  # (MAE, runs) of the classes too small to stand alone
    for klass in _fallbacks(kind, error_class(kind, setup, model, gpus), setup):
        row = table.get(klass)
        if row is None:
            continue
        n = int(row.get("rows") or 0)
        pct = float(row.get("mae") or 0.0)
        if n < MIN_ROWS and klass != "all":
            own.append((pct, n))
            continue
        held, held_n = row.get("held_out_mae"), int(row.get("held_out_rows") or 0)
        if held is not None and held_n >= MIN_HELD_OUT and held > pct:
            pct = held
        for small, k in own:  # a small class that reads worse pulls the error up, by its share of MIN_ROWS runs
            pct = max(pct, pct + (small - pct) * k / MIN_ROWS)
        return ExpectedError(kind, klass, pct, n, held, held_n, float(row.get("bias") or 0.0))
    return None


def time_error_fields(t: TimeEstimate) -> dict[str, float | int | str | None]:
    """The rate's expected error as flat plan fields (the hours share it: hours = tokens / rate)."""
    e = t.expected_error
    return {"throughput_expected_error_pct": None if e is None else round(e.pct, 1),
            "throughput_expected_error_rows": None if e is None else e.rows,
            "throughput_expected_error_class": None if e is None else e.klass}
