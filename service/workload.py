"""The public workload schema: flat, used by the CLI, `ask --json`, the API and the evals."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

Method = Literal["full", "lora", "qlora", "freeze", "pretrain"]
StageName = Literal["sft", "dpo", "orpo", "simpo", "kto", "rm", "ppo", "grpo"]
BillingChoice = Literal["on_demand", "monthly", "spot"]
Objective = Literal["cheapest", "fastest", "balanced"]
CloudName = Literal["tencent", "jdcloud"]
# Training settings as users name them (None = the framework's default, stated in the answer)
FrameworkName = Literal["llamafactory", "ms-swift", "torchtune", "axolotl", "trl"]
PrecisionName = Literal["amp-bf16", "pure-bf16", "fp16", "fp8"]
OptimizerName = Literal["adamw", "adamw-8bit", "paged-adamw-8bit", "adafactor"]
CheckpointingName = Literal["none", "selective", "full"]
LoraTargetsName = Literal["qv", "attn", "all-linear"]
LoraExtraName = Literal["lm_head", "embed_tokens"]
AttentionName = Literal["flash", "sdpa", "eager"]
LossName = Literal["full-logits", "chunked"]
ShardingName = Literal["deepspeed", "fsdp", "fsdp2"]

MAX_NAME_CHARS = 128  # a model or GPU name
MAX_GPU_NAMES = 64  # entries in gpu_include / gpu_exclude (the catalog has a few dozen GPUs)
GpuName = Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME_CHARS)]

DEFAULT_SEQ_LEN = 2048
DEFAULT_AVG_TOKENS = 512
DEFAULT_EPOCHS = 3.0
MIN_DEADLINE_HOURS = 0.01  # 36 seconds: no training job is planned to finish sooner
# The least of each size that makes a plan: below these the engine's answer is ¥0.00 in 0 h (issue 31: '1e-300
# tokens' planned as nothing), so the schema refuses them, naming the field and its least value.
# The smallest model the catalog holds is YOLOv5s at 7.2M parameters (knowledge/models.yaml; the smallest decoder is
# Pythia-14M): a size below it sizes nothing we know and was answered all the same ('5e-324B (≈ Qwen2-0.5B)'), so
# it is refused. tests/api/test_numbers.py keeps this floor at or below the catalog's smallest model.
MIN_PARAMS_B = 0.007  # 7M parameters
MIN_TOKENS = 1.0
MIN_EPOCHS = 0.01
MIN_DATASET_GB = 1e-6  # 1 KB


class Workload(BaseModel):
    """What the user wants to train. None means 'not given': the engine assumes a default and says so."""

    # The rules between fields (checked in _consistent), stated in the JSON schema too
    model_config = ConfigDict(extra="forbid", json_schema_extra={"allOf": [
        {"anyOf": [{"required": ["model"], "properties": {"model": {"type": "string"}}},
                   {"required": ["params_b"], "properties": {"params_b": {"type": "number"}}}],
         "description": "give model or params_b"},
        {"anyOf": [{"not": {"required": ["quant_bits"]}}, {"properties": {"quant_bits": {"type": "null"}}},
                   {"properties": {"method": {"enum": ["lora", "qlora"]}}}],
         "description": "quant_bits only with method qlora (lora becomes qlora)"},
    ]})

    kind: Literal["training"] = Field(default="training", description="the plan contract's discriminator: "
                                      "'training', the default (may be left out); a serving workload has kind "
                                      "'serving' (docs/serving.md)")
    model: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS,
                              description="model name or alias, e.g. Qwen2-7B")
    params_b: float | None = Field(default=None, ge=MIN_PARAMS_B, le=5000, description="parameters in billions (at "
                                    f"least {MIN_PARAMS_B:g}: the catalog's smallest model has 7.2M)")
    method: Method = "lora"
    quant_bits: Literal[4, 8] | None = Field(default=None, description="QLoRA bits: 4 or 8")
    samples: int | None = Field(default=None, gt=0, le=10**12)
    avg_tokens_per_sample: int | None = Field(default=None, gt=0, le=10**7)
    tokens: float | None = Field(default=None, ge=MIN_TOKENS, le=1e15, description="total training tokens per epoch")
    dataset_gb: float | None = Field(default=None, ge=MIN_DATASET_GB, le=1e7)
    epochs: float | None = Field(default=None, ge=MIN_EPOCHS, le=1000)
    seq_len: int | None = Field(default=None, ge=16, le=1_048_576)
    budget_cny: float | None = Field(default=None, gt=0, le=1e10)
    budget_period: Literal["month", "total"] = "month"
    # At least 36 seconds: the engine divides by the deadline, and a deadline of 5e-324 h overflowed it (500).
    deadline_hours: float | None = Field(default=None, ge=MIN_DEADLINE_HOURS, le=24 * 365 * 5,
                                         description=f"finish within this many hours (at least {MIN_DEADLINE_HOURS})")
    clouds: list[CloudName] = Field(default_factory=list, max_length=2, description="empty = both clouds")
    gpu_include: list[GpuName] = Field(default_factory=list, max_length=MAX_GPU_NAMES,
                                       description="only these GPUs, e.g. A100, H800")
    gpu_exclude: list[GpuName] = Field(default_factory=list, max_length=MAX_GPU_NAMES,
                                       description="never these GPUs")
    gpu_count: int | None = Field(default=None, ge=1, le=4096)
    billing: BillingChoice | None = Field(default=None, description="None = pick the cheapest mode")
    objective: Objective = "cheapest"
    # Engine knobs (optional; the planner chooses when absent)
    micro_batch: int | None = Field(default=None, ge=1, le=4096)
    lora_rank: int | None = Field(default=None, ge=1, le=4096)
    grad_ckpt: bool | None = None
    zero_stage: Literal[0, 1, 2, 3] | None = Field(default=None, description="DeepSpeed ZeRO stage (an integer)")
    # Training settings (optional; None = the framework's default, which the answer states)
    framework: FrameworkName | None = Field(default=None, description="whose defaults fill unset settings; "
                                            "None = LLaMA-Factory (the launch bundle's framework)")
    precision: PrecisionName | None = Field(default=None, description="amp-bf16 (fp32 master and Adam states), "
                                            "pure-bf16 (weights and states in bf16), fp16, fp8 (FP8 GEMMs)")
    optimizer: OptimizerName | None = None
    activation_checkpointing: CheckpointingName | None = Field(
        default=None, description="none, selective (linear outputs kept, attention core and elementwise ops "
        "recomputed) or full (every layer recomputed); grad_ckpt true/false is the same as full/none")
    lora_targets: LoraTargetsName | None = Field(default=None, description="LoRA on q/v, on attention, or on "
                                                 "every linear layer")
    lora_modules_to_save: list[LoraExtraName] | None = Field(
        default=None, max_length=2, description="modules trained in full beside LoRA (head, embeddings)")
    attention: AttentionName | None = Field(default=None, description="flash (FlashAttention-2), sdpa (PyTorch), "
                                            "eager (materialises the s x s scores)")
    loss: LossName | None = Field(default=None, description="full-logits, or chunked / fused cross-entropy "
                                  "(Liger, Cut CE): no full-vocabulary logits")
    kbit_upcast: bool | None = Field(default=None, description="QLoRA through PEFT's "
                                     "prepare_model_for_kbit_training: norms, embeddings and head in fp32")
    sharding: ShardingName | None = Field(default=None, description="how ZeRO-3-style sharding runs: DeepSpeed, "
                                          "FSDP (per layer, root unsharded) or FSDP2 (per parameter)")
    stage: StageName | None = Field(default=None, description="the training objective: sft (default), dpo, orpo, "
                                    "simpo, kto, rm (reward model), ppo, grpo; preference stages run two sequences "
                                    "a sample, dpo/kto/ppo/grpo keep a frozen reference model (knowledge/lexicon.yaml)")

    @field_validator("kind", mode="before")
    @classmethod
    def _training_kind(cls, value: object) -> object:
        # One line that names both kinds and where each goes, not pydantic's "Input should be 'training'"
        if value == "serving":
            raise ValueError("this plans training; a serving workload (kind 'serving') goes to POST /v1/plan, "
                             "`gpu-advisor plan --kind serving` or the serving tools (docs/serving.md)")
        if value != "training":
            raise ValueError(f"{str(value)[:40]!r} is not a plan kind: send 'training' (or leave kind out) for a "
                             "training workload, or 'serving' with a serving workload's fields (docs/serving.md)")
        return value

    @field_validator("zero_stage", mode="before")
    @classmethod
    def _stage_not_bool(cls, value: object) -> object:
        if isinstance(value, bool):  # False == 0 in Python: a boolean would pass as stage 0 or 1
            raise ValueError("zero_stage is a number 0-3, not true/false")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Workload:
        if self.quant_bits is not None and self.method != "qlora":
            if self.method == "lora":
                self.method = "qlora"
            else:
                raise ValueError(f"quant_bits={self.quant_bits} only applies to method qlora, not {self.method}")
        if self.grad_ckpt is not None and self.activation_checkpointing is not None and \
                self.grad_ckpt != (self.activation_checkpointing != "none"):
            raise ValueError(f"grad_ckpt={str(self.grad_ckpt).lower()} contradicts activation_checkpointing="
                             f"{self.activation_checkpointing}; give one of them")
        if self.model is None and self.params_b is None:
            raise ValueError("give a model name (e.g. Qwen2-7B) or a parameter count (params_b, e.g. 7)")
        return self

    @property
    def checkpointing(self) -> str | None:
        """The stated activation checkpointing (grad_ckpt true/false read as full/none), None when unset."""
        if self.activation_checkpointing is not None:
            return self.activation_checkpointing
        return None if self.grad_ckpt is None else ("full" if self.grad_ckpt else "none")

    @property
    def effective_quant_bits(self) -> int | None:
        if self.method != "qlora":
            return None
        return self.quant_bits or 4
