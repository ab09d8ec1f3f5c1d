"""The training plan contract: typed pydantic models for exactly what `report.plan_to_dict` builds (the API
response, `plan --json`, the assistant's and the MCP `plan` tool's artifact, the documents' input, the evals'
truth). Units in the field names; money in yuan (CNY). docs/plan-json.md explains every field.

`extra="forbid"` everywhere and every field required in the serialized schema: a key added to, renamed in or
dropped from plan_to_dict fails validation (tests/planner/test_training_contract.py) until it is declared here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from service.catalog.schema import Billing, Cloud, FactConfidence, PriceConfidence, SaleStatus
from service.planner.serving_types import NewerPrice, NoteOut
from service.sizing.types import Method, Offload, Precision
from service.workload import Workload

ModelKind = Literal["decoder", "encoder", "vision_transformer", "cnn", "diffusion"]
PickCode = Literal["published_price", "cheaper_tight", "cheaper_misses_deadline", "faster_misses_deadline", "cheaper_over_budget",
                   "faster_over_budget", "cost_tie", "balanced", "ranked"]


class _Out(BaseModel):
    # Strict: a figure that turns into a string (or a flag into a number) is drift, not something to coerce.
    # Serialized, every field is present (None where not applicable): the schema lists them all as required.
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_serialization_defaults_required=True)


class PlanPrice(_Out):
    """One catalog price row with its provenance."""

    price_cny: float = Field(description="yuan per unit")
    unit: Literal["hour", "month"]
    region: str
    source: str = Field(description="where the price was read (a URL or a document)")
    as_of: str | None = Field(description="the date the source states, YYYY-MM-DD; null: the page has none")
    captured: str | None = Field(default=None, description="when an undated source was read, YYYY-MM-DD")
    confidence: PriceConfidence = Field(description="official, third_party, estimate or user (the price the user gave)")
    note: str
    note_zh: str
    price_low_cny: float | None = Field(description="the low end when the source gives a range")
    promo: bool = Field(description="a promotional price")
    on_request: bool = Field(description="a market reference for a price-on-request family, never the price")
    stale: bool = Field(description="not returned by the last catalog sync")
    content_as_of: str | None = Field(default=None, description="the content's age, YYYY-MM-DD: freshness counts "
                                      "from it (a ~2021 list page read in 2026 is old)")
    content_basis: Literal["stated", "commit", "newest_family", "capture", "anchor"] | None = Field(
        default=None, description="what dates the content: the source's own date, its commit in the cloud's "
        "documentation repository, the newest family the page lists, a dated capture, an estimate's anchor")
    newer: NewerPrice | None = Field(default=None, description="a newer dated price of the same instance, shown "
                                     "beside this one")
    date_en: str | None = Field(default=None, description="the date as a reader reads it: the content's age, when "
                                "it was read and, when old, that it may have changed")
    date_zh: str | None = Field(default=None, description="the same in Chinese")


class BillingCost(_Out):
    """The whole job's cost under one billing mode."""

    billing: Billing
    total_cny: float = Field(description="the whole job")
    monthly_cny: float = Field(description="what one month of this billing costs while the job runs")
    months: int = Field(description="billed months (monthly billing; 0 otherwise)")
    price: PlanPrice


class PriceQuote(_Out):
    """A family with no public price (价格需询价): the sales link and, where a dated market reference exists, an
    estimate range for the whole job (never the price)."""

    price_on_request: bool
    link: str
    estimate_total_cny: list[float] | None = Field(min_length=2, max_length=2,
                                                   description="[low, high] for the whole job, an estimate")
    reference: PlanPrice | None = Field(description="the dated market reference, hourly")


class TrainingStrategy(_Out):
    """How the job trains on this cluster."""

    label: str = Field(description="e.g. 'LoRA r8 + DDP + grad checkpointing + BF16'")
    label_zh: str
    method: Method
    quant_bits: int | None = Field(description="QLoRA bits (4 or 8)")
    zero_stage: int = Field(ge=0, le=3, description="DeepSpeed ZeRO stage (0: none)")
    offload: Offload = Field(description="CPU offload of optimizer state (or everything)")
    grad_ckpt: bool = Field(description="gradient checkpointing")
    precision: Precision
    micro_batch: int
    seq_len: int
    lora_rank: int | None = Field(description="LoRA rank (LoRA and QLoRA only)")
    gpus_per_node: int
    nodes: int
    deepspeed: bool = Field(description="DeepSpeed is used (ZeRO stage above 0)")
    sharding: Literal["deepspeed", "fsdp", "fsdp2"] | None = Field(description="who shards (ZeRO stage above 0)")
    optimizer: Literal["adamw", "adamw-8bit", "paged-adamw-8bit", "adafactor"]
    optimizer_in_backward: bool = Field(description="the optimizer steps inside the backward (no full grads held)")
    activation_checkpointing: Literal["none", "selective", "full"]
    attention: Literal["flash", "sdpa", "eager"]
    loss: Literal["full-logits", "chunked"] = Field(description="chunked: a fused cross-entropy, no full logits")
    fp32_weights: bool = Field(description="weights kept in fp32 (the residual stream in fp32 too)")
    lora_targets: Literal["qv", "attn", "all-linear"] | None
    lora_modules_to_save: list[str] | None = Field(description="trained in full beside the adapters (lm_head ...)")
    kbit_upcast: bool | None = Field(description="QLoRA: prepare_model_for_kbit_training's fp32 norms and head")


class MemoryTerms(_Out):
    """Per-GPU memory by term, GiB."""

    per_gpu_gib: float
    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    overhead_gib: float = Field(description="buffers + allocator reserve + runtime")
    allocated_gib: float = Field(description="weights + gradients + optimizer + activations + buffers "
                                             "(torch.cuda.max_memory_allocated)")
    reserved_gib: float = Field(description="allocated + the caching allocator's reserve (max_memory_reserved)")
    buffers_gib: float = Field(description="ZeRO-3/FSDP gathers and buckets, autocast copies, dequantised weights")
    allocator_gib: float = Field(description="the caching allocator's block rounding and fragmentation")
    runtime_gib: float = Field(description="outside the allocator: CUDA context, NCCL buffers")
    paged_optimizer_gib: float = Field(description="paged optimizer states (evicted to CPU RAM under pressure)")
    expected_error_pct: float | None = Field(description="the expected error of per_gpu_gib: mean |error| of the "
                                             "measured runs of its class (docs/validation.md); null: none")
    expected_error_rows: int | None = Field(description="measured runs behind expected_error_pct")
    expected_error_class: str | None = Field(description="the class those runs share, e.g. 'lora' or "
                                             "'full sharded (ZeRO-3)'")


class Room(_Out):
    """The cheapest setting that gives room when the fit is tight or short."""

    setting: str = Field(description="the workload field and value, e.g. loss=chunked")
    change: str
    change_zh: str
    need_gib: float


class MemoryVerdict(_Out):
    """Does it fit: the need (reserved + runtime) against what the instance's GPU offers."""

    status: Literal["fits", "tight", "does_not_fit"]
    need_gib: float
    capacity_gib: float = Field(description="what PyTorch can use on the GPU")
    margin_gib: float = Field(description="capacity - need; negative: short by")
    margin_pct: float
    band_pct: float = Field(description="within this share of the card the fit is tight: the memory estimate's "
                            "expected error, 5 % to 25 %")
    basis: str
    room: Room | None


class HostCheck(_Out):
    """The host rules (>= 8 vCPU per GPU, RAM >= 2x GPU memory) and the GPU interconnect."""

    vcpu_per_gpu: float | None = Field(description="null: the instance's vCPU count is not published")
    vcpu_ok: bool | None = Field(description="null: not published, not checked")
    ram_recommended_gib: int
    ram_ok: bool | None = Field(description="null: the instance's RAM is not published, not checked")
    interconnect: str = Field(description="NVLink GB/s or the PCIe generation")
    rdma: bool
    nodes: int


class TrainingCandidate(_Out):
    """One instance type that fits, at the cluster size the objective chose: sized, timed and costed."""

    cloud: Cloud
    instance_type: str
    family: str
    gpu: str = Field(description="the catalog GPU id")
    gpu_name: str
    gpu_count: float = Field(description="GPUs per node (a fraction for vGPU slices)")
    nodes: int
    vcpus: int | None = Field(description="per node; null: not published")
    memory_gib: float | None = Field(description="host RAM per node; null: not published")
    rdma: bool
    sale_status: SaleStatus
    instance_source: str
    instance_confidence: FactConfidence
    strategy: TrainingStrategy
    memory_per_gpu_gib: float
    memory: MemoryTerms
    memory_verdict: MemoryVerdict
    host_ram_needed_gib: float = Field(description="host RAM for CPU offload (whole job)")
    gpu_memory_gib: float = Field(description="one GPU's memory")
    training_hours: float = Field(description="wall-clock hours, CPU-offload slowdown included")
    hours_per_1e8_tokens: float | None = Field(default=None, description="hours per 100M tokens on this "
                                               "configuration: the rate that scales to any data size")
    cny_per_1e8_tokens: float | None = Field(default=None, description="yuan per 100M tokens at the chosen billing "
                                             "(null: price on request)")
    throughput_tokens_per_s: float = Field(description="the cluster's rate (all GPUs): tokens_total / rate = hours")
    mfu: float = Field(description="achieved model-FLOPs utilisation of the dense 16-bit peak")
    mfu_source: str = Field(description="the basis of the MFU estimate")
    flops_per_token: float = Field(description="executed FLOPs per token (model FLOPs + recomputation)")
    work_units: float = Field(description="tokens (or samples) the job processes in all")
    peak_tflops: float = Field(description="the GPU's dense 16-bit peak")
    total_gpus: int
    slowdown: float = Field(description="the CPU-offload factor already in the rate and hours (1 without offload)")
    scaling_efficiency: float = Field(description="share of the micro-batch time not lost to communication")
    throughput_expected_error_pct: float | None = Field(description="the expected error of the rate and the hours: "
                                                        "mean |error| of the measured runs of its class")
    throughput_expected_error_rows: int | None = Field(description="measured runs behind it")
    throughput_expected_error_class: str | None = Field(description="the class those runs share")
    cost_cny: dict[Billing, BillingCost] = Field(description="the job's cost by billing mode")
    billing: Billing | Literal["on_request"] = Field(description="the chosen billing mode, or on_request")
    total_cost_cny: float | None = Field(description="the chosen billing's cost of the job; null: price on request")
    monthly_cost_cny: float | None = Field(description="one month of the chosen billing; null: price on request")
    price: PlanPrice | None = Field(description="the chosen price; null: price on request")
    price_on_request: bool
    quote: PriceQuote | None = Field(description="price on request: the sales link and an estimate; null otherwise")
    quote_link: str = Field(description="the cloud's price calculator (or sales page)")
    host: HostCheck
    within_budget: bool | None = Field(description="null when no budget was given")
    meets_deadline: bool | None = Field(description="null when no deadline was given")
    warnings: list[NoteOut] = Field(description="per-option warnings")


class TrainingJob(_Out):
    """The workload resolved against the catalog."""

    method: Method
    quant_bits: int | None
    seq_len: int
    tokens_per_epoch: float
    epochs: float
    tokens_total: float
    samples_per_epoch: float
    data_basis: Literal["tokens", "samples", "dataset_gb", "assumed"] = Field(
        default="samples", description="how the data size was known; 'assumed': none was given, so the hours and "
        "cost illustrate the rate per 1e8 tokens, and the answer asks for the data (or states the assumed "
        "dataset in its first line)")
    data_note: str = Field(default="", description="the dataset the figures assume, when it is not the user's own")
    data_note_zh: str = ""


class TrainingModel(_Out):
    """The sized model with its source."""

    id: str
    name: str
    family: str
    kind: ModelKind
    params_b: float = Field(description="published parameters, billions")
    params_counted_b: float = Field(description="parameters counted from the architecture, billions")
    active_params_b: float | None = Field(description="MoE: parameters active per token, billions")
    num_layers: int | None
    hidden_size: int | None
    vocab_size: int | None
    source: str
    estimated: bool = Field(default=False, description="a generic architecture of the stated size (a size alone, "
                            "or a name the catalog does not hold), not the model's own config")


class RejectedOption(_Out):
    instance_type: str
    reason: str


class PickReason(_Out):
    """Why a cloud's pick is neither its cheapest nor its fastest priced option."""

    instance_type: str
    code: PickCode = Field(description="the ranking rule that put the pick first")
    message: str
    message_zh: str
    cheapest: str = Field(description="the cloud's cheapest priced option (in candidates)")
    fastest: str = Field(description="the cloud's fastest priced option (in candidates)")
    versus: list[str] = Field(description="the options the message names")


class FrontierSize(_Out):
    """One cluster size of an instance family (the cheapest instance type at that GPU count)."""

    instance_type: str
    nodes: int
    total_gpus: int
    hours: float
    cost_cny: float | None = Field(description="null: price on request")
    meets_deadline: bool | None
    within_budget: bool | None
    slower_than_fewer_gpus: bool = Field(description="a smaller cluster of the family is at least as fast")


class ClusterRef(_Out):
    """A sized cluster of any size and family."""

    instance_type: str
    cloud: Cloud
    gpu: str
    nodes: int
    total_gpus: int
    hours: float
    cost_cny: float | None = Field(description="null: price on request")
    strategy: str
    strategy_zh: str


class TrainingPlan(_Out):
    """Every instance on the chosen clouds that trains the workload, sized, timed, costed and ranked."""

    kind: Literal["training"] = Field(default="training", description="the plan contract's discriminator")
    workload: Workload = Field(description="the request as validated")
    model: TrainingModel
    job: TrainingJob
    candidates: list[TrainingCandidate] = Field(description="ranked; the top ones and every option named in "
                                                "picks, alternatives and pick_reasons")
    n_candidates: int = Field(description="how many instance types fit")
    picks: dict[Cloud, str] = Field(description="cloud -> instance type of that cloud's first candidate")
    alternatives: dict[Literal["cheaper", "faster"], str] = Field(description="cheaper / faster -> instance type")
    pick_reasons: dict[Cloud, PickReason] = Field(description="only clouds whose pick is neither their cheapest "
                                                  "nor their fastest option")
    rejected: list[RejectedOption] = Field(description="every instance type that does not fit or has no price")
    assumptions: list[str] = Field(description="every default the engine assumed")
    assumptions_zh: list[str]
    notes: list[NoteOut] = Field(description="plan-level advice (storage, NUMA, over budget, misses deadline)")
    infeasible: str | None = Field(description="when nothing fits: what would")
    infeasible_zh: str | None
    frontier: dict[str, list[FrontierSize]] = Field(description="'<cloud>:<family>' -> cluster sizes by GPU count")
    fastest_within_budget: ClusterRef | None = Field(description="the fastest sized cluster within the budget")
    cheapest_within_deadline: ClusterRef | None = Field(description="the cheapest priced sized cluster that meets "
                                                        "the deadline")


class PlanContractError(RuntimeError):
    """The engine built a training plan its contract does not declare: a bug in plan_to_dict or in TrainingPlan,
    never the caller's input (so not a ValidationError, which adapters answer as bad input)."""


def checked_training_plan(d: Mapping[str, Any]) -> TrainingPlan:
    """plan_to_dict's output (perhaps with assumptions added) validated against TrainingPlan; drift raises
    PlanContractError naming the fields."""
    try:
        return TrainingPlan.model_validate(d)
    except ValidationError as exc:
        where = "; ".join(f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
        raise PlanContractError(f"The training plan does not match its contract ({where}): update "
                                "service/planner/training_types.py and docs/plan-json.md with plan_to_dict.") from exc
