"""The serving plan contract: typed pydantic models (the API response, `plan-serving --json`, the chat's
serving answer, the launch bundle's input). Units in the field names; money in yuan (CNY)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from service.catalog.schema import PriceConfidence
from service.serving_workload import ServingWorkload


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoteOut(_Out):
    code: str
    severity: str
    message: str
    message_zh: str


class NewerPrice(_Out):
    """A newer dated price of the same instance and billing (a third party's 2026 capture, a promotion), shown beside
    the price used, never instead of it."""

    model_config = ConfigDict(extra="forbid", json_schema_serialization_defaults_required=True)

    price_cny: float
    unit: Literal["hour", "month"]
    as_of: str | None = Field(description="the date the source states, YYYY-MM-DD")
    content_as_of: str | None = Field(default=None, description="the content's age, YYYY-MM-DD")
    captured: str | None = Field(default=None, description="when an undated source was read, YYYY-MM-DD")
    confidence: PriceConfidence
    promo: bool = Field(description="a promotional price")
    source: str


class PriceRef(_Out):
    price_cny: float
    unit: Literal["hour", "month"]
    billing: str
    region: str = ""
    source: str
    as_of: str | None = Field(description="the date the source states, YYYY-MM-DD; null: the page has none")
    captured: str | None = Field(default=None, description="when an undated source was read, YYYY-MM-DD")
    confidence: str
    promo: bool = False
    content_as_of: str | None = Field(default=None, description="the content's age, YYYY-MM-DD: freshness counts "
                                      "from it")
    content_basis: Literal["stated", "commit", "newest_family", "capture", "anchor"] | None = None
    newer: NewerPrice | None = Field(default=None, description="a newer dated price of the same instance, shown "
                                     "beside this one")
    date_en: str | None = Field(default=None, description="the date as a reader reads it: the content's age, when "
                                "it was read and, when old, that it may have changed")
    date_zh: str | None = Field(default=None, description="the same in Chinese")


class Launch(_Out):
    """Commands that start one replica, and what the bundle's scripts run."""

    vllm: str
    sglang: str
    replicas_note: str = Field(description="how the replicas spread over the nodes")


class ModelRef(_Out):
    id: str
    name: str
    params_b: float
    active_params_b: float | None = None
    source: str
    estimated: bool = False  # a generic architecture of the stated size, not the model's own config


class ServingSizing(_Out):
    """One GPU type sized for the workload (the engine's answer, before any instance or price)."""

    gpu: str
    gpu_name: str
    engine: str
    weights: str
    kv_dtype: str
    gpus_per_replica: int = Field(description="tensor_parallel x pipeline_parallel")
    tensor_parallel: int = 1
    pipeline_parallel: int = Field(default=1, description="stages over nodes (vLLM --pipeline-parallel-size)")
    replicas: int
    total_gpus: int
    memory_gpus_per_replica: int = Field(description="the fewest GPUs per replica that start")
    runtime: str = Field(default="cuda", description="cuda | npu (Ascend: vllm-ascend) | rocm")
    engine_assumed: str = Field(default="", description="the release whose defaults the figures assume")
    engine_assumed_zh: str = ""
    mem_fraction: float
    max_model_len: int
    weights_gib_per_gpu: float
    activation_peak_gib: float = Field(default=0.0, description="the start-up profile's peak the engine sets "
                                       "aside: forward at max_num_batched_tokens, sampler, vision encoder")
    vision_profile_gib: float = Field(default=0.0, description="the vision encoder's part of that peak")
    graph_gib: float = Field(default=0.0, description="vLLM CUDA-graph capture, outside the pool")
    kv_bytes_per_token: float = Field(description="per GPU of a replica, every layer")
    kv_bytes_per_token_model: float = Field(description="the whole model (all GPUs of a replica)")
    kv_cache_gib_per_gpu: float
    kv_capacity_tokens: int = Field(description="tokens the KV pool of one replica holds")
    max_concurrency: float = Field(description="sequences of max_model_len one replica holds at once")
    max_concurrency_at_load: float = Field(description="sequences of the load's lengths one replica holds")
    starts: bool
    starts_reason: str
    input_tokens: int
    output_tokens: int
    concurrency: float = Field(description="sequences in flight per replica at the load")
    output_tokens_per_s: float = Field(description="the whole deployment at the load")
    output_tokens_per_s_per_replica: float
    ttft_ms: float | None = Field(description="None when the load exceeds what the replicas serve")
    tpot_ms: float
    decode_bound: str
    saturated: bool
    meets_limits: bool
    limited_by: str = Field(description="memory | throughput | latency")
    headroom: str
    headroom_zh: str
    rejected_degrees: list[str] = Field(default_factory=list, description="GPUs per replica that do not work, why")
    refused_layout: str | None = Field(default=None, description="a pinned layout the engine refuses (TP6 for 64 "
                                       "heads), with its message; the figures are for the layout that replaces it")
    notes: list[str] = Field(default_factory=list, description="the engine's notes: FP8 weight-only, queueing")
    driver: str = Field(default="", description="what drove the GPU count, with its figures: the KV pool per "
                        "replica, the rate one replica serves, or a latency limit; an answer states it before a "
                        "count above LARGE_GPUS")
    driver_zh: str = ""
    latency_infeasible: str = Field(default="", description="a latency limit no number of replicas meets (one "
                                    "request alone misses it), said; the load is then sized without it")
    demand_output_tokens_per_s: float = Field(default=0.0, description="output tokens/s the load asks")
    capacity_output_tokens_per_s: float = Field(default=0.0, description="output tokens/s the replicas serve "
                                                "within the limits")
    oversized: bool = Field(default=False, description="capacity above OVERSIZE_FACTOR x the load's demand")
    large: bool = Field(default=False, description="more than LARGE_GPUS GPUs: the answer says the driver first")


class ServingOption(_Out):
    """One instance type on one cloud carrying the deployment, costed for 24x7 use."""

    cloud: str
    instance_type: str
    family: str
    gpu: str
    gpu_count: float = Field(description="GPUs per instance")
    nodes: int = Field(description="instances to rent")
    replicas: int = Field(description="replicas running on them (every GPU used)")
    gpus_per_replica: int
    total_gpus: int
    vcpus: int | None = None  # None: not published
    memory_gib: float | None = None  # None: not published
    sale_status: str
    sizing: ServingSizing
    billing: str = Field(description="the chosen billing mode, or on_request")
    cost_per_hour_cny: float | None
    cost_per_month_cny: float | None = Field(description="the chosen billing, 730 hours")
    monthly_cny_by_billing: dict[str, float] = Field(description="one month of 24x7 use under each billing")
    cny_per_million_output_tokens: float | None = Field(description="at the stated load (or at capacity)")
    price: PriceRef | None
    price_on_request: bool = False
    estimate_month_cny: list[float] | None = Field(default=None, description="price on request: a dated market "
                                                   "reference's range for the month, an estimate, never the price")
    quote_link: str
    within_budget: bool | None
    launch: Launch
    warnings: list[NoteOut] = Field(default_factory=list)


class ServingVariant(_Out):
    """One cloud's pick for the same load with other weights (offered beside a BF16 plan)."""

    weights: str
    cloud: str
    instance_type: str
    gpu: str
    nodes: int
    total_gpus: int
    cost_per_month_cny: float | None
    cny_per_million_output_tokens: float | None
    weight_only: bool = Field(default=False, description="FP8 on a GPU without FP8 tensor cores: W8A16 Marlin")
    checkpoint: str = Field(default="", description="what to load: an FP8 checkpoint or --quantization fp8, an "
                            "AWQ/GPTQ int4 checkpoint")


class ServingPlan(_Out):
    """Every instance on the chosen clouds that serves the workload, ranked by the objective."""

    # Serialized, every field is present: `kind` (the plan contract's discriminator) is required in the schema.
    model_config = ConfigDict(extra="forbid", json_schema_serialization_defaults_required=True)

    kind: Literal["serving"] = Field(default="serving", description="the plan contract's discriminator")
    workload: ServingWorkload
    model: ModelRef
    candidates: list[ServingOption]
    picks: dict[str, str] = Field(description="cloud -> instance_type of its best option")
    rejected: list[dict[str, str]] = Field(description="instance_type, cloud and reason")
    no_fit: dict[str, str] = Field(default_factory=dict, description="cloud -> why it has no pick (nothing serves "
                                   "the workload, or only options 10x dearer per token than the best)")
    no_fit_zh: dict[str, str] = Field(default_factory=dict)
    variants: list[ServingVariant] = Field(default_factory=list, description="the same load with FP8 / INT4 "
                                           "weights where the cards run them: each cloud's pick")
    engine_assumed: str = Field(default="", description="the engine release whose defaults the figures assume")
    engine_assumed_zh: str = ""
    assumptions: list[str]
    assumptions_zh: list[str]
    infeasible: str | None = None
    infeasible_zh: str | None = None

    def pick(self, cloud: str | None = None) -> ServingOption | None:
        for c in self.candidates:
            if cloud is None or c.cloud == cloud:
                return c
        return None
