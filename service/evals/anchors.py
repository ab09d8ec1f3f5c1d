"""The sizing engine against its published anchors (evals/anchors.yaml, from shared/reference/sizing.md): verl's
FLOPs vectors, DeepSpeed's estimator examples, Llama model-card GPU-hours and the LLaMA-Factory memory table.

Each anchor names its source, its role (calibration: the engine's priors were set from it; validation: they were
not; check: a formula reproduced) and a tolerance: `rel` (|engine - published| <= rel x published + abs) or
`band` (lo <= engine / published <= hi).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from service.catalog.loader import Catalog
from service.errors import AdvisorError, InvalidInputError
from service.evals.dataset import EVALS_DIR, read_yaml

DEFAULT_ANCHORS = EVALS_DIR / "anchors.yaml"
Kind = Literal["verl_flops", "gpu_hours", "deepspeed_states", "llamafactory_band", "measured_memory",
               "measured_throughput", "measured_oom"]
MEASURED = ("measured_memory", "measured_throughput", "measured_oom")


class Tolerance(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    rel: float | None = Field(default=None, gt=0)
    abs: float = Field(default=0.0, ge=0)
    band: tuple[float, float] | None = None

    @model_validator(mode="after")
    def _one(self) -> Tolerance:
        if (self.rel is None) == (self.band is None):
            raise ValueError("give exactly one of rel or band")
        return self

    def holds(self, engine: float, published: float) -> bool:
        if self.band is not None:
            return self.band[0] <= engine / published <= self.band[1]
        return abs(engine - published) <= (self.rel or 0.0) * abs(published) + self.abs

    def text(self) -> str:
        if self.band is not None:
            return f"ratio {self.band[0]:g}-{self.band[1]:g}"
        return f"±{(self.rel or 0) * 100:g} %" + (f" (+{self.abs:g})" if self.abs else "")


class Anchor(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    kind: Kind
    role: Literal["calibration", "validation", "check"] = "check"
    source: str
    published: float = Field(gt=0)
    unit: str
    tolerance: Tolerance
    inputs: dict[str, Any]
    note: str = ""
    # measured runs (issue 22): the source document (whole sources are held out), what the figure measures
    # (allocated | reserved | nvidia-smi | peak-unknown), and the figure as the source wrote it
    source_group: str = ""
    memory_kind: str | None = None
    measured: dict[str, Any] | None = None


class AnchorFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    anchors: list[Anchor]


@dataclass(frozen=True)
class AnchorResult:
    id: str
    kind: str
    role: str
    source: str
    published: float
    engine: float | None
    unit: str
    tolerance: str
    ok: bool | None  # None: could not be evaluated (see error)
    error: str = ""
    gated: bool = True  # False: a measured-runs row, reported in docs/validation.md with its error, not gated

    @property
    def ratio(self) -> float | None:
        return None if self.engine is None else self.engine / self.published

    def to_dict(self) -> dict[str, Any]:
        ratio = self.ratio
        return {**asdict(self), "engine": None if self.engine is None else round(self.engine, 4),
                "ratio": None if ratio is None else round(ratio, 4)}


def load_anchors(path: Path = DEFAULT_ANCHORS) -> list[Anchor]:
    try:
        return AnchorFile.model_validate(read_yaml(path, "anchors")).anchors
    except ValidationError as exc:
        raise InvalidInputError(f"{path} is not a valid anchor file: {exc}", "Fix the anchors.") from exc


def _model(inputs: dict[str, Any], catalog: Catalog) -> Any:
    from service.catalog.queries import resolve_model
    from service.catalog.schema import ModelSpec

    if "model" in inputs:
        return resolve_model(str(inputs["model"]), catalog.models)
    arch = {"family": "anchor", "kind": "decoder", "source": "evals/anchors.yaml", "as_of": date(2023, 2, 27),
            **inputs["arch"]}
    arch.setdefault("name", arch["id"])
    return ModelSpec.model_validate(arch)


def _engine(a: Anchor, catalog: Catalog) -> float:
    from service.catalog.queries import resolve_gpu
    from service.sizing import compute, memory, throughput
    from service.sizing.types import GIB, TrainSetup

    i = a.inputs
    if a.kind == "verl_flops":
        return compute.verl_step_flops(_model(i, catalog), [int(s) for s in i["seqlens"]]) / 1e12
    if a.kind == "gpu_hours":
        gpus = int(i.get("gpus", 1024))
        setup = TrainSetup("pretrain", seq_len=int(i["seq_len"]), grad_ckpt=False)
        gpu = resolve_gpu(str(i["gpu"]), catalog.gpus)[0]
        t = throughput.training_time(_model(i, catalog), gpu, setup, float(i["tokens"]), total_gpus=gpus)
        return t.hours * gpus
    if a.kind == "deepspeed_states":
        estimator = getattr(memory, "deepspeed_model_states_gib", None)
        if estimator is None:
            raise LookupError("service.sizing.memory has no deepspeed_model_states_gib")
        got = estimator(float(i["params"]), float(i.get("largest_layer", 0.0)), int(i["gpus_per_node"]),
                        stage=int(i["stage"]), offload=i.get("offload", "none"))
        gib = float(got.gpu_gib if i.get("measure", "gpu") == "gpu" else got.cpu_gib)
        return gib * 1024 if a.unit == "MiB" else gib
    if a.kind in MEASURED:
        return measured_engine(a, catalog)
    setup = TrainSetup(**i["setup"])  # llamafactory_band: model states only, in GB of 1e9 bytes
    mem = memory.estimate_memory(_model(i, catalog), setup)
    return (mem.weights_gib + mem.gradients_gib + mem.optimizer_gib) * GIB / 1e9


def anchor_case(a: Anchor, catalog: Catalog) -> Any:
    """A measured anchor as an engine case (service/evals/runs.py): a training-run row (`inputs.run`, settings
    the row leaves unset from the framework's defaults) or an explicit engine setup (`inputs.setup`)."""
    from service.evals import runs

    i = a.inputs
    if "run" in i:
        kind = {"measured_memory": "memory", "measured_throughput": "throughput", "measured_oom": "oom"}[a.kind]
        measured = dict(a.measured or {})
        measured.setdefault("memory_kind", a.memory_kind)
        row = runs.RunRow.model_validate({**i["run"], "id": a.id, "source": a.source, "kind": kind,
                                          "source_group": a.source_group or a.id, "measured": measured,
                                          "note": a.note})
        return runs.make_case(row, catalog)
    return runs.setup_case(a.id, a.source, a.source_group or a.source, a.kind, a.published, a.memory_kind,
                           i, _model(i, catalog), catalog, role=a.role)


def measured_engine(a: Anchor, catalog: Catalog) -> float:
    """The engine's figure for a measured run, on the row's basis: per-GPU memory (GiB), per-GPU tokens/s, MFU;
    for an OOM row the per-GPU need (GiB)."""
    from service.evals.runs import evaluate_case

    out = evaluate_case(anchor_case(a, catalog))
    if out.engine is None:
        raise LookupError(out.error or "the engine cannot size this row")
    return out.engine


def evaluate_anchor(a: Anchor, catalog: Catalog) -> AnchorResult:
    from dataclasses import replace

    result = _evaluate_anchor(a, catalog)
    return result if "run" not in a.inputs else replace(result, gated=False)


def _evaluate_anchor(a: Anchor, catalog: Catalog) -> AnchorResult:
    base = (a.id, a.kind, a.role, a.source, a.published)
    try:
        value = _engine(a, catalog)
    except (LookupError, ValueError, TypeError, ValidationError, AdvisorError) as exc:
        return AnchorResult(*base, None, a.unit, a.tolerance.text(), None, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # an engine failure on one anchor is reported with the others
        return AnchorResult(*base, None, a.unit, a.tolerance.text(), False, f"{type(exc).__name__}: {exc}")
    if a.kind == "measured_oom":  # never "fits" for a run reported as OOM
        from service.evals.runs import evaluate_case

        verdict = evaluate_case(anchor_case(a, catalog)).verdict
        return AnchorResult(*base, value, a.unit, "not 'fits'", verdict != "fits", "" if verdict != "fits" else
                            "the engine says it fits; the run went out of memory")
    return AnchorResult(*base, value, a.unit, a.tolerance.text(), a.tolerance.holds(value, a.published))


def evaluate_anchors(anchors: list[Anchor], catalog: Catalog) -> list[AnchorResult]:
    return [evaluate_anchor(a, catalog) for a in anchors]


def anchor_summary(results: list[AnchorResult]) -> dict[str, Any]:
    scored = [r for r in results if r.ok is not None]
    by_kind: dict[str, dict[str, int]] = {}
    for r in scored:
        k = by_kind.setdefault(r.kind, {"n": 0, "ok": 0})
        k["n"] += 1
        k["ok"] += int(bool(r.ok))
    return {"n": len(results), "evaluated": len(scored), "within_tolerance": sum(1 for r in scored if r.ok),
            "skipped": len(results) - len(scored), "by_kind": by_kind,
            "report_only": sum(1 for r in results if not r.gated)}
