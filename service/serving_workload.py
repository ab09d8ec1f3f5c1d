"""The public serving workload: what the user wants to serve, on which clouds, at which load. Flat, like
`Workload`, and used by the CLI, the API, the chat's serving question type and the evals.

None means 'not given': the engine assumes a default and the plan says so (service/planner/serving_plan.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from service.catalog.queries import resolve_model
from service.catalog.schema import ModelSpec
from service.errors import InvalidInputError
from service.workload import MAX_NAME_CHARS, MIN_PARAMS_B, BillingChoice, CloudName, Objective

WeightsChoice = Literal["bf16", "fp16", "fp8", "int8", "int4", "mxfp4"]
KvChoice = Literal["auto", "bf16", "fp16", "fp8"]
EngineChoice = Literal["vllm", "sglang", "trtllm", "lmdeploy"]

DEFAULT_INPUT_TOKENS = 1024
MIN_MEM_FRACTION = 0.01
DEFAULT_OUTPUT_TOKENS = 256


class ServingWorkload(BaseModel):
    """A model to serve (deploy behind an API), on which GPU if pinned, at which load and latency limits."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"allOf": [
        {"anyOf": [{"required": ["model"], "properties": {"model": {"type": "string"}}},
                   {"required": ["params_b"], "properties": {"params_b": {"type": "number"}}}],
         "description": "give model or params_b"},
        {"not": {"required": ["concurrency", "request_rate"], "properties": {
            "concurrency": {"type": "number"}, "request_rate": {"type": "number"}}},
         "description": "give concurrency or request_rate, not both"},
    ]})

    kind: Literal["serving"] = Field(default="serving", description="the plan contract's discriminator")
    model: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS,
                              description="model name, Hugging Face repo id or a size such as 14B")
    params_b: float | None = Field(default=None, ge=MIN_PARAMS_B, le=5000, description="parameters in billions (at "
                                   f"least {MIN_PARAMS_B:g}: the catalog's smallest model has 7.2M)")
    gpu: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS,
                            description="pin one GPU type, e.g. L20 or H800; None = every GPU the clouds rent")
    gpus: int | None = Field(default=None, ge=1, le=64, description="GPUs per replica (tensor parallel); "
                             "None = the fewest that meet the target")
    weights: WeightsChoice | None = Field(default=None, description="weight dtype: bf16/fp16, fp8, int8 (W8A8), "
                                          "int4 (AWQ/GPTQ), mxfp4 (gpt-oss); None = the dtype the model ships in "
                                          "(bf16; fp8 for DeepSeek-V3/R1)")
    kv_dtype: KvChoice = Field(default="auto", description="KV-cache dtype; auto = the model's 16-bit dtype")
    engine: EngineChoice = "vllm"
    # at least 1 %: a smaller share holds no model, and 5e-324 made the GPU count for the weights infinite
    mem_fraction: float | None = Field(default=None, ge=MIN_MEM_FRACTION, le=1, description="vLLM "
                                       "gpu_memory_utilization / SGLang mem_fraction_static / TRT-LLM "
                                       "free_gpu_memory_fraction / LMDeploy cache_max_entry_count, 0.01-1; None = "
                                       "the engine's default")
    max_model_len: int | None = Field(default=None, ge=16, le=10_485_760, description="context length the "
                                      "server accepts; None = the model's")
    input_tokens: int | None = Field(default=None, ge=1, le=10_485_760, description="prompt tokens per request")
    output_tokens: int | None = Field(default=None, ge=1, le=1_048_576, description="generated tokens per request")
    concurrency: float | None = Field(default=None, gt=0, le=1_000_000, description="requests in flight at the peak")
    request_rate: float | None = Field(default=None, gt=0, le=1_000_000, description="requests per second")
    ttft_ms: float | None = Field(default=None, gt=0, le=3_600_000, description="time-to-first-token limit")
    tpot_ms: float | None = Field(default=None, gt=0, le=600_000, description="time-per-output-token limit")
    clouds: list[CloudName] = Field(default_factory=list, max_length=2, description="empty = both clouds")
    billing: BillingChoice | None = Field(default=None, description="None = the cheapest mode for 24x7 use "
                                          "(usually monthly)")
    objective: Objective = Field(default="cheapest", description="cheapest, fastest (lowest TTFT) or balanced")
    budget_cny: float | None = Field(default=None, gt=0, le=1e10, description="monthly budget, yuan")

    @model_validator(mode="after")
    def _consistent(self) -> ServingWorkload:
        if self.model is None and self.params_b is None:
            raise ValueError("give a model name (e.g. Qwen2.5-14B) or a parameter count (params_b, e.g. 14)")
        if self.concurrency is not None and self.request_rate is not None:
            raise ValueError("give concurrency (requests in flight) or request_rate (requests per second), "
                             "not both")
        if self.max_model_len is not None and self.input_tokens is not None:
            need = self.input_tokens + (self.output_tokens or 1)
            if need > self.max_model_len:
                raise ValueError(f"max_model_len {self.max_model_len} cannot hold input_tokens + output_tokens "
                                 f"({need}): raise max_model_len or shorten the requests")
        return self

    @property
    def lengths(self) -> tuple[int, int]:
        return self.input_tokens or DEFAULT_INPUT_TOKENS, self.output_tokens or DEFAULT_OUTPUT_TOKENS


def parse_serving_workload(data: dict[str, Any], models: tuple[ModelSpec, ...] | None = None) -> ServingWorkload:
    """Validate a serving workload for a caller that renders errors itself (the chat): one InvalidInputError that
    names every bad field and its fix (422-style), including an unknown model with the closest names when
    `models` is given."""
    try:
        w = ServingWorkload.model_validate(data)
    except ValidationError as exc:
        parts = []
        for err in exc.errors():
            field = ".".join(str(x) for x in err["loc"]) or "workload"
            parts.append(f"{field}: {str(err['msg']).removeprefix('Value error, ')}")
        raise InvalidInputError("Invalid serving workload: " + "; ".join(parts) + ".",
                                "Fix the fields named above and ask again.") from exc
    if models is not None and w.model is not None and not w.model.endswith(".json"):
        from service.catalog.queries import parse_param_count
        from service.errors import UnknownModelError

        if parse_param_count(w.model) is None:
            try:
                resolve_model(w.model, models)
            except UnknownModelError as exc:
                from service.catalog.name_sizes import guess_from_name

                guess = guess_from_name(w.model)
                if guess is None or guess.kind != "decoder" or not guess.params_b:  # a stated size is estimated
                    raise InvalidInputError(f"model: {exc.message}", exc.fix, message_zh=exc.message_zh,
                                            fix_zh=exc.fix_zh) from exc
    return w
