"""Measured training runs (evals/training_runs.yaml format) turned into engine cases, on the same basis as measured.

A row states what the source states; the rest comes from the framework's defaults (service/sizing/frameworks.py)
and is listed in the case's `assumed`. The measured figure is normalised: memory to GiB per GPU on its own basis
(allocated = torch max_memory_allocated, reserved = max_memory_reserved, nvidia-smi = the device total; a peak of
unknown kind is compared with the device total (what nvidia-smi shows)), throughput to tokens/s per GPU or to MFU. Units are read as written: GB and
MB are decimal, GiB and MiB binary.

Which rows are held out of fitting is fixed by source before anything is fitted: sha1 of the row's source_group,
first 8 hex digits, mod 100 < 30 (`held_out`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from service.catalog.loader import Catalog
from service.catalog.schema import GpuSpec, ModelSpec
from service.errors import AdvisorError
from service.sizing.comm import interconnect
from service.sizing.frameworks import DEFAULTS, FrameworkDefaults, Stated, resolve_settings
from service.sizing.types import GIB, TrainSetup
from service.sizing.verdict import CARD_USABLE, card_capacity_gib

HELD_OUT_PERCENT = 30
Basis = Literal["allocated", "reserved", "device", "tokens_per_gpu", "mfu", "oom"]
UNIT_BYTES = {"GB": 1e9, "MB": 1e6, "GiB": float(GIB), "MiB": 1024.0**2}
MEMORY_BASIS: dict[str, Basis] = {"allocated": "allocated", "reserved": "reserved", "nvidia-smi": "device",
                                  "peak-unknown": "device"}
# Rows name frameworks beyond the five the schema offers: plain Transformers Trainer scripts (qlora.py, alpaca-lora:
# prepare_model_for_kbit_training, no checkpointing unless asked), FSDP and DeepSpeed launchers, Megatron.
_GENERIC = DEFAULTS["llamafactory"]
FRAMEWORK_ALIASES: dict[str, FrameworkDefaults] = {
    "llamafactory": DEFAULTS["llamafactory"], "llama-factory": DEFAULTS["llamafactory"],
    "ms-swift": DEFAULTS["ms-swift"], "swift": DEFAULTS["ms-swift"], "axolotl": DEFAULTS["axolotl"],
    "trl": DEFAULTS["trl"], "torchtune": DEFAULTS["torchtune"], "torchtune-issue": DEFAULTS["torchtune"],
    "hf-trainer": replace(_GENERIC, name="Transformers Trainer", checkpointing="none", lora_targets="qv",
                          kbit_upcast=True, fp32_weights=False, source="transformers Trainer defaults"),
    "fsdp": replace(_GENERIC, name="PyTorch FSDP", sharding="fsdp", fp32_weights=True, source="FSDP MixedPrecision"),
    "deepspeed": replace(_GENERIC, name="DeepSpeed", fp32_weights=False, source="DeepSpeed"),
    "megatron": replace(_GENERIC, name="Megatron-LM", fp32_weights=False, loss="chunked", source="Megatron-LM"),
}
GPU_HINTS = (("24gb consumer", "RTX-3090"), ("a100 (size", "A100 80G"), ("v100-32g-sxm3", "V100-32G-SXM2"),
             ("a6000", "RTX-A6000"))


def held_out(source_group: str) -> bool:
    """Fixed up front, by source: about 30 % of the sources (never tuned on)."""
    return int(hashlib.sha1(source_group.encode()).hexdigest()[:8], 16) % 100 < HELD_OUT_PERCENT


class Measured(BaseModel):
    model_config = ConfigDict(extra="allow")

    value: float | None = None
    unit: str | None = None
    memory_kind: str | None = None
    oom: bool = False


class RunRow(BaseModel):
    """One row of evals/training_runs.yaml (extra keys kept)."""

    model_config = ConfigDict(extra="allow")

    id: str
    source: str
    source_group: str
    kind: Literal["memory", "throughput", "oom"]
    model: str
    arch: dict[str, Any] | None = None
    gpu: str = "unspecified"
    gpus: int = Field(default=1, ge=1)
    nodes: int = Field(default=1, ge=1)
    framework: str | None = None
    method: str = "lora"
    zero_stage: int | None = None
    offload: str | None = None
    precision: str | None = None
    optimizer: str | None = None
    grad_ckpt: str | bool | None = None
    lora_targets: str | None = None
    lora_rank: int | None = None
    attention: str | None = None
    loss: str | None = None
    seq_len: int | None = None
    micro_batch: int | None = None
    measured: Measured = Field(default_factory=Measured)
    note: str = ""
    assumed: list[str] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    """A run made ready for the engine: inputs, the measured figure on its basis, and what was assumed."""

    row: RunRow
    model: ModelSpec | None
    gpu: GpuSpec | None
    setup: TrainSetup | None
    basis: Basis
    measured: float | None  # GiB per GPU, tokens/s per GPU or MFU; None for OOM rows
    capacity_gib: float | None  # the card, for OOM rows and the fit verdict
    assumed: tuple[str, ...] = field(default=())
    na: str = ""  # why the engine cannot size it ("" = it can)
    role: str | None = None  # an anchor's role, when it predates the split (the Qwen profiling rows were fitted)

    @property
    def split(self) -> str:
        if self.role is not None:
            return "fitted" if self.role == "calibration" else "held-out"
        return "held-out" if held_out(self.row.source_group) else "fitted"


def _gpu(name: str, catalog: Catalog) -> GpuSpec | None:
    from service.catalog.queries import resolve_gpu

    low = name.lower()
    for hint, canonical in GPU_HINTS:
        if hint in low:
            name = canonical
    try:
        return resolve_gpu(name, catalog.gpus)[0]
    except AdvisorError:
        return None


def _model(row: RunRow, catalog: Catalog) -> ModelSpec | None:
    from service.catalog.queries import resolve_model

    try:
        return resolve_model(row.model, catalog.models)
    except AdvisorError:
        pass
    a = row.arch
    if not a:
        return None
    fields = {k: a[k] for k in ("num_layers", "hidden_size", "num_heads", "num_kv_heads", "intermediate_size",
                                "vocab_size", "head_dim", "tie_word_embeddings", "qkv_bias", "mlp") if k in a}
    try:
        return ModelSpec(id=row.model.rsplit("/", 1)[-1].lower(), name=row.model, family="run", kind="decoder",
                         params_published_b=float(a.get("params_b") or 1.0), source=row.source,
                         as_of=date(2024, 1, 1), max_position_embeddings=max(row.seq_len or 0, 4096), **fields)
    except ValueError:  # an incomplete architecture (pydantic's ValidationError is a ValueError)
        return None


def _ckpt(value: str | bool | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "full" if value else "none"
    return value if value in ("none", "selective", "full") else None


def _sharding(row: RunRow, fw: FrameworkDefaults) -> str:
    text = f"{row.framework} {row.note} {' '.join(row.assumed)} {row.extra.get('fsdp', '')}".lower()
    if "fsdp1" in text:  # torchtune's distributed recipes ran FSDP1 until its FSDP2 migration (PR #1517, 2024-09)
        return "fsdp"
    if "fsdp2" in text or fw.sharding == "fsdp2":
        return "fsdp2"
    if "fsdp" in text:
        return "fsdp"
    return fw.sharding


def _optimizer(row: RunRow) -> str | None:
    """The row's optimizer; for "other", the one its note or assumptions name (paged / 8-bit / Adafactor)."""
    if row.optimizer in ("adamw", "adamw-8bit", "paged-adamw-8bit", "adafactor"):
        return row.optimizer
    if row.optimizer != "other":
        return None
    text = f"{row.id} {row.note} {' '.join(row.assumed)} {row.extra.get('optimizer_name', '')}".lower()
    eight = "8bit" in text or "8-bit" in text
    if "paged" in text and (eight or row.extra.get("paged_optimizer")):
        # a 32-bit paged AdamW a row marks as such is sized as the 8-bit one: both keep their states in unified
        # memory, outside the allocator's count
        return "paged-adamw-8bit"
    if eight:
        return "adamw-8bit"
    return "adafactor" if "adafactor" in text else None


def build_setup(row: RunRow, gpu: GpuSpec | None) -> tuple[TrainSetup, list[str]]:
    """The row's TrainSetup: stated settings, the framework's defaults for the rest."""
    fw = FRAMEWORK_ALIASES.get((row.framework or "").lower(), _GENERIC)
    n = row.gpus
    method = row.method if row.method in ("full", "lora", "qlora", "freeze", "pretrain") else "full"
    assumed: list[str] = []
    stage = row.zero_stage
    if stage is None:
        stage = 3 if n > 1 and method in ("full", "pretrain") else 0
        if n > 1:
            assumed.append(f"ZeRO stage {stage} (not stated)")
    extra = row.extra
    kbit = extra.get("prepare_model_for_kbit_training")
    stated = Stated(
        precision=row.precision if row.precision in ("amp-bf16", "pure-bf16", "fp16", "fp8") else None,
        optimizer=_optimizer(row),
        checkpointing=_ckpt(row.grad_ckpt), lora_targets=row.lora_targets, lora_rank=row.lora_rank,
        attention=row.attention, loss=row.loss, kbit_upcast=kbit if isinstance(kbit, bool) else None,
        sharding=_sharding(row, fw), ds_bf16_master=bool(extra.get("bf16_master_weights_and_grads", False)))
    s, notes = resolve_settings(fw, stated, method=method, n_gpus=n, zero_stage=stage,
                                supports_bf16=gpu.supports_bf16 if gpu else True,
                                supports_flash=gpu.supports_flash_attn2 if gpu else True)
    assumed += [en for en, _ in notes]
    if row.seq_len is None:
        assumed.append("sequence length 2048 (not stated)")
    if row.micro_batch is None:
        assumed.append("micro-batch 1 (not stated)")
    bits = int(extra.get("quant_bits") or 4)
    offload = row.offload if row.offload in ("none", "optimizer", "all") else "none"
    parallel = _parallel(row)
    setup = TrainSetup(
        method=method,  # type: ignore[arg-type]
        quant_bits=bits if method == "qlora" else None, n_gpus=n,
        # one GPU shards nothing, but DeepSpeed's ZeRO optimizer still keeps its master and partition buffers
        zero_stage=stage if n > 1 or offload != "none" or s.sharding == "deepspeed" else 0,
        offload=offload,  # type: ignore[arg-type]
        optimizer=s.optimizer, precision=s.precision, seq_len=row.seq_len or 2048, micro_batch=row.micro_batch or 1,
        grad_ckpt=s.grad_ckpt, ckpt_mode=s.ckpt_mode, attention=s.attention, loss=s.loss,
        lora_rank=s.lora_rank, lora_targets=s.lora_targets, kbit_upcast=s.kbit_upcast, fp32_weights=s.fp32_weights,
        optimizer_in_bwd=bool(extra.get("optimizer_in_bwd", s.optimizer_in_bwd)),
        activation_offload=bool(extra.get("activation_offloading", False)), sharding=s.sharding,
        fused_optimizer=s.fused_optimizer or bool(extra.get("fused_optimizer") or extra.get("adamw_fused")),
        liger_swiglu=s.liger_swiglu or "swiglu" in str(extra.get("liger", "")).lower(),
        fsdp_wrapped=not _unwrapped(row), interconnect=interconnect(gpu, row.nodes) if gpu else None,
        expert_loop=bool(extra.get("expert_loop", False)), ds_bf16_master=s.ds_bf16_master,
        shard_gpus=_int(extra.get("shard_gpus"), 0), expandable_segments=bool(extra.get("expandable_segments")),
        compiled=bool(extra.get("compile") or extra.get("torch_compile")),
        **parallel)
    return setup, assumed


def _int(value: object, default: int = 1) -> int:
    return int(value) if isinstance(value, int | float) and value > 0 else default


def _parallel(row: RunRow) -> dict[str, Any]:
    """Megatron-style layout from the row: tensor x pipeline degree, micro-batches per step, the pipeline bubble
    (Narayanan et al. 2021: (pp - 1) / (m + pp - 1) for m micro-batches per pipeline per step)."""
    x = row.extra
    tp, pp, cp = _int(x.get("tp")), _int(x.get("pp")), _int(x.get("cp"))
    dp = _int(x.get("dp"), max(1, row.gpus // (tp * pp * cp)))
    seq, mb = row.seq_len or 2048, row.micro_batch or 1
    global_seqs = x.get("global_batch")
    for key in ("tokens_per_batch", "global_batch_tokens"):
        if global_seqs is None and x.get(key):
            global_seqs = float(x[key]) / seq
    if global_seqs is None and x.get("grad_accum"):
        global_seqs = dp * mb * float(x["grad_accum"])
    accum = max(1, round(float(global_seqs) / (dp * mb))) if global_seqs else 1
    bubble = (pp - 1) / (accum + pp - 1) if pp > 1 else 0.0
    return {"grad_accum": accum, "model_parallel": tp * pp, "pipeline_bubble": bubble}


def _unwrapped(row: RunRow) -> bool:
    """FSDP without an auto-wrap policy: the row says the model ran as one FSDP unit."""
    text = f"{row.note} {' '.join(row.assumed)}".lower()
    return "one fsdp unit" in text or "no auto-wrap" in text or "without fsdp_transformer_layer_cls_to_wrap" in text


def hardware_flops(row: RunRow) -> bool:
    """The source's FLOP rate counts the recomputed forward (HFU-style), as Megatron-LM's and BLOOM's do."""
    text = f"{row.note} {' '.join(row.assumed)}".lower()
    return "recomput" in text and ("count" in text or "hardware" in text) and "not stated" not in text


def _measured(row: RunRow, gpu: GpuSpec | None, setup: TrainSetup) -> tuple[Basis, float | None, str]:
    m = row.measured
    if row.kind == "oom" or m.oom:
        return "oom", None, ""
    if m.value is None or m.unit is None:
        return "reserved", None, "no measured value"
    if row.kind == "memory":
        if m.unit not in UNIT_BYTES:
            return "reserved", None, f"memory unit {m.unit!r}"
        basis = MEMORY_BASIS.get(m.memory_kind or "peak-unknown", "device")
        return basis, m.value * UNIT_BYTES[m.unit] / GIB, ""
    unit = m.unit
    if unit == "MFU":
        return "mfu", m.value, ""
    if unit == "tokens/s/GPU":
        return "tokens_per_gpu", m.value, ""
    if unit == "tokens/s":
        return "tokens_per_gpu", m.value / row.gpus, ""
    if unit == "samples/s":
        return "tokens_per_gpu", m.value * setup.seq_len / row.gpus, ""
    if unit == "s/it":
        global_batch = row.extra.get("global_batch")
        if global_batch is None and row.extra.get("grad_accum") is not None:
            global_batch = row.gpus * setup.micro_batch * int(row.extra["grad_accum"])
        if global_batch is None:
            return "tokens_per_gpu", None, "s/it without the global batch"
        return "tokens_per_gpu", float(global_batch) * setup.seq_len / m.value / row.gpus, ""
    return "tokens_per_gpu", None, f"throughput unit {unit!r}"


_TP = re.compile(r"^(tp|pp|ep|cp)$")


def make_case(row: RunRow, catalog: Catalog) -> Case:
    gpu = _gpu(row.gpu, catalog)
    model = _model(row, catalog)
    setup, assumed = build_setup(row, gpu)
    basis, value, why = _measured(row, gpu, setup)
    capacity = card_capacity_gib(gpu) if gpu is not None else _capacity_from_name(row.gpu)
    parallel = {k: v for k, v in row.extra.items() if _TP.match(k) and isinstance(v, int) and v > 1}
    na = why
    if model is None:
        na = na or f"model {row.model!r} is not in the catalog and the row gives no architecture"
    elif model.moe is not None and row.kind != "throughput" and setup.method != "full":
        na = na or ""
    if parallel and basis != "mfu" and not na:
        na = "tensor / pipeline / expert parallelism (" + ", ".join(f"{k}={v}" for k, v in parallel.items()) + \
             ") is not modelled"
    if basis in ("tokens_per_gpu", "mfu") and gpu is None and not na:
        na = f"GPU {row.gpu!r} not in the catalog: no peak to time against"
    if basis == "oom" and capacity is None and not na:
        na = f"GPU {row.gpu!r}: card size unknown"
    if gpu is None and basis not in ("tokens_per_gpu", "mfu", "oom"):
        assumed.append(f"GPU {row.gpu!r} not resolved: memory does not depend on it here")
    return Case(row, model, gpu, setup, basis, value, capacity, tuple(assumed), na)


_SIZE = re.compile(r"(\d+)\s*gi?b", re.IGNORECASE)


def _capacity_from_name(name: str) -> float | None:
    m = _SIZE.search(name)
    return float(m.group(1)) * CARD_USABLE["hbm"] if m else None


@dataclass(frozen=True)
class Outcome:
    """The engine on one case: its figure on the row's basis, or its fit verdict for an OOM row."""

    case: Case
    engine: float | None
    verdict: str = ""  # fits | tight | does_not_fit (every row with a card)
    error: str = ""

    @property
    def rel_error(self) -> float | None:
        if self.engine is None or self.case.measured is None or self.case.basis == "oom":
            return None
        return (self.engine - self.case.measured) / self.case.measured


def evaluate_case(case: Case) -> Outcome:
    from service.sizing import compute, memory, throughput
    from service.sizing.verdict import fit_verdict

    if case.na or case.model is None or case.setup is None:
        return Outcome(case, None, error=case.na)
    m, setup, row = case.model, case.setup, case.row
    try:
        mem = memory.estimate_memory(m, setup)
        # the verdict as an answer gives it: tight within the class's expected error of the card
        verdict = fit_verdict(mem.per_gpu_gib, case.capacity_gib, mem.expected_error).status \
            if case.capacity_gib else ""
        if case.basis in ("allocated", "reserved", "device", "oom"):
            value = {"allocated": mem.allocated_gib, "reserved": mem.reserved_gib, "device": mem.per_gpu_gib,
                     "oom": mem.per_gpu_gib}[case.basis]
            return Outcome(case, value, verdict)
        assert case.gpu is not None
        fraction = mem.trainable_params / max(1.0, m.params_published_b * 1e9)
        cluster = throughput.Cluster(max(1, row.gpus // row.nodes), row.nodes, rdma=True)
        t = throughput.training_time(m, case.gpu, setup, 1e9, row.gpus, trainable_fraction=fraction,
                                     cluster=cluster)
        per_gpu = t.steady_tokens_per_s / row.gpus
        if case.basis == "mfu":
            flops = compute.flops_per_token(m, setup, fraction) if hardware_flops(row) else \
                compute.model_flops_per_token(m, setup, fraction)
            return Outcome(case, per_gpu * flops / (case.gpu.dense_16bit_tflops * 1e12), verdict)
        return Outcome(case, per_gpu, verdict)
    except (ValueError, ZeroDivisionError, AdvisorError) as exc:
        return Outcome(case, None, error=f"{type(exc).__name__}: {exc}")


def setup_case(anchor_id: str, source: str, source_group: str, kind: str, published: float,
               memory_kind: str | None, inputs: dict[str, Any], model: ModelSpec, catalog: Catalog,
               role: str | None = None) -> Case:
    """A measured anchor that names its engine setup outright (the Qwen profiling rows)."""
    gpu = _gpu(str(inputs["gpu"]), catalog)
    setup = TrainSetup(**inputs["setup"])
    row = RunRow(id=anchor_id, source=source, source_group=source_group,
                 kind="memory" if kind == "measured_memory" else "throughput", model=model.name,
                 gpu=str(inputs["gpu"]), gpus=int(inputs.get("gpus", 1)), nodes=int(inputs.get("nodes", 1)),
                 method=setup.method, zero_stage=setup.zero_stage, seq_len=setup.seq_len,
                 micro_batch=setup.micro_batch, lora_rank=setup.lora_rank,
                 grad_ckpt="full" if setup.grad_ckpt else "none",
                 measured=Measured(value=published, unit="GiB" if kind == "measured_memory" else "tokens/s/GPU",
                                   memory_kind=(memory_kind or "peak-unknown") if kind == "measured_memory" else None))
    basis: Basis = MEMORY_BASIS.get(memory_kind or "peak-unknown", "device") if kind == "measured_memory" \
        else "tokens_per_gpu"
    capacity = card_capacity_gib(gpu) if gpu is not None else None
    return Case(row, model, gpu, setup, basis, published, capacity, ("setup stated in full by the anchor",),
                role=role)


def rule_figure(case: Case) -> float | None:
    """The one-line rules on the same row. Throughput: 6 x N x tokens at 40 % MFU of the dense BF16 peak (as MFU:
    0.40). Memory: LLaMA-Factory's README rule, GB per billion parameters: full 18 (sharded over the GPUs under
    ZeRO-3), pure bf16 8, LoRA 2, QLoRA 8-bit 1, 4-bit 0.5."""
    from service.sizing.params import count_params

    if case.model is None or case.setup is None:
        return None
    n = count_params(case.model).total
    s = case.setup
    if case.basis == "mfu":
        return 0.40
    if case.basis == "tokens_per_gpu":
        if case.gpu is None:
            return None
        return float(0.40 * case.gpu.dense_16bit_tflops * 1e12 / (6 * n))
    per_b = {"full": 18.0, "pretrain": 18.0, "freeze": 2.0, "lora": 2.0}.get(s.method)
    if per_b is None:
        per_b = 1.0 if s.quant_bits == 8 else 0.5
    if s.method in ("full", "pretrain") and s.precision == "pure_bf16":
        per_b = 8.0
    shard = case.row.gpus if s.zero_stage >= 3 else 1
    return float(per_b * n / 1024**3 / shard)
