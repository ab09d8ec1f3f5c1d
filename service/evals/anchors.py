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
               "measured_throughput"]
MEASURED = ("measured_memory", "measured_throughput")


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


def _measured_inputs(a: Anchor, catalog: Catalog) -> tuple[Any, Any, Any, int, int]:
    from service.catalog.queries import resolve_gpu
    from service.sizing.types import TrainSetup

    i = a.inputs
    gpu = resolve_gpu(str(i["gpu"]), catalog.gpus)[0]
    return _model(i, catalog), gpu, TrainSetup(**i["setup"]), int(i.get("gpus", 1)), int(i.get("nodes", 1))


def measured_engine(a: Anchor, catalog: Catalog) -> float:
    """The engine's figure for a measured run: per-GPU memory (GiB) or per-GPU tokens/s."""
    from service.sizing import memory, throughput

    m, gpu, setup, gpus, nodes = _measured_inputs(a, catalog)
    if a.kind == "measured_memory":
        return float(memory.estimate_memory(m, setup).per_gpu_gib)
    mem = memory.estimate_memory(m, setup)
    fraction = mem.trainable_params / max(1.0, m.params_published_b * 1e9)
    cluster = throughput.Cluster(gpus // nodes, nodes, rdma=True)
    t = throughput.training_time(m, gpu, setup, 1e9, gpus, trainable_fraction=fraction, cluster=cluster)
    return t.throughput_tokens_per_s / gpus


def rule_of_thumb(a: Anchor, catalog: Catalog) -> float:
    """The one-line rules on the same row. Throughput: 6 x N x tokens at 40 % MFU of the dense BF16 peak.
    Memory: LLaMA-Factory's README rule, GB per billion parameters: full 18 (sharded over the GPUs under ZeRO-3),
    LoRA 2, QLoRA 8-bit 1, 4-bit 0.5."""
    from service.sizing.params import count_params

    m, gpu, setup, gpus, _ = _measured_inputs(a, catalog)
    n = count_params(m).total
    if a.kind == "measured_throughput":
        return float(0.40 * gpu.dense_16bit_tflops * 1e12 / (6 * n))
    per_b = {"full": 18.0, "pretrain": 18.0, "freeze": 2.0, "lora": 2.0}.get(setup.method)
    if per_b is None:
        per_b = 1.0 if setup.quant_bits == 8 else 0.5
    shard = gpus if setup.zero_stage >= 3 else 1
    return float(per_b * n / 1024**3 / shard)


def evaluate_anchor(a: Anchor, catalog: Catalog) -> AnchorResult:
    base = (a.id, a.kind, a.role, a.source, a.published)
    try:
        value = _engine(a, catalog)
    except (LookupError, ValueError, TypeError, ValidationError, AdvisorError) as exc:
        return AnchorResult(*base, None, a.unit, a.tolerance.text(), None, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # an engine failure on one anchor is reported with the others
        return AnchorResult(*base, None, a.unit, a.tolerance.text(), False, f"{type(exc).__name__}: {exc}")
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
            "skipped": len(results) - len(scored), "by_kind": by_kind}
