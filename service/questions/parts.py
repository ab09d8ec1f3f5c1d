"""Typed pieces the answers share: the model sized, the training setup as estimated, the memory terms and verdict,
a plan's row as a comparison shows it, a rental, a passage. Field names are the engine's (service/planner)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from service.planner.training_types import MemoryTerms, MemoryVerdict

__all__ = ["MemoryTerms", "MemoryVerdict", "ModelEcho", "StrategyEcho", "PlanRow", "Rental", "PassageRef",
           "Part", "Said"]

# An assumption said in both languages (English, Chinese), as the engine states it.
Said = tuple[str, str]


class Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelEcho(Part):
    """The model as the engine sized it (service/planner/estimate.py model_dict)."""

    id: str
    name: str
    family: str
    kind: str
    params_b: float
    params_counted_b: float | None = None
    active_params_b: float | None = None
    num_layers: int | None = None
    hidden_size: int | None = None
    vocab_size: int | None = None
    source: str = ""
    estimated: bool = Field(default=False, description="not in the catalog: a generic decoder of its stated size")


class StrategyEcho(Part):
    """The training setup as estimated (service/planner/estimate.py strategy_dict)."""

    method: str
    quant_bits: int | None = None
    zero_stage: int = 0
    offload: str = "none"
    grad_ckpt: bool = False
    activation_checkpointing: str = "none"
    precision: str = "amp-bf16"
    optimizer: str = "adamw"
    optimizer_in_backward: bool = False
    attention: str = "flash"
    loss: str = "full-logits"
    sharding: str | None = None
    framework: str = "llamafactory"
    fp32_weights: bool = False
    seq_len: int = 2048
    micro_batch: int = 1
    lora_rank: int | None = None
    lora_targets: str | None = None
    lora_modules_to_save: list[str] | None = None
    kbit_upcast: bool | None = None


class PlanRow(Part):
    """One option of a comparison (or the plan's pick) as service/planner/questions/compare.py:plan_row states it."""

    option: str
    fits: bool
    priced: bool
    hours: float | None = None
    cost_cny: float | None = None
    instance_type: str | None = None
    cloud: str | None = None
    gpu: str | None = None
    gpu_count: int | float | None = None
    billing: str
    per_gpu_gib: float | None = None
    gpu_memory_gib: float | None = None
    strategy: str = ""
    strategy_zh: str = ""
    card_hours: float | None = None
    reason: str = ""
    reason_zh: str = ""


class Rental(Part):
    cloud: str
    instance_type: str
    gpu_count: float


class SourceEcho(Part):
    title: str
    ref: str


class PassageRef(Part):
    """A passage of the knowledge base, as cited."""

    id: str
    title: str = ""
    section: str = ""
    source: str = ""
    text: str = ""
    score: float | None = None
    dense_rank: int | None = None
    bm25_rank: int | None = None
    lang: str = ""
    ref: str = ""
    sources: list[SourceEcho] = Field(default_factory=list)
    resource_uri: str | None = Field(default=None, description="MCP: the guide:// resource of the whole section")


Verdict = Literal["fits", "tight", "does_not_fit"]


def total_weights_gib(memory: MemoryTerms | None, strategy: StrategyEcho | None, gpus: int | None) -> float | None:
    """The model's weights in all (what "weights ≈ parameters × bytes" is checked on): per GPU times the GPUs they
    are sharded over (ZeRO-3), else one copy."""
    if memory is None:
        return None
    sharded = strategy is not None and strategy.zero_stage == 3 and (gpus or 1) > 1
    return round(memory.weights_gib * ((gpus or 1) if sharded else 1), 2)
