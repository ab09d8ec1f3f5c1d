"""The MCP tools' arguments: pydantic models whose JSON schema is each tool's `inputSchema`.

The workload is the public flat schema (service.workload.Workload, the body of POST /v1/plan); a question's
subject is added beside it under the names the assistant's tools use (service/assistant/registry.py and intents/), and
`estimate` takes the fields of POST /v1/estimate. tests/mcp/test_args.py keeps the three in step.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from service.errors import InvalidInputError
from service.planner.catalog_view import CatalogQuery
from service.planner.questions.diagnose import Observation
from service.planner.questions.facts import Fact
from service.serving_workload import ServingWorkload
from service.workload import MAX_NAME_CHARS, CloudName, Method, Workload


def _gpu() -> Any:
    return Field(min_length=1, max_length=MAX_NAME_CHARS,
                 description="the GPU, any in the catalog: 4090, 3090, L20, L40S, A10, A100 80G, A800, H800, H20 ...")


class EstimateArgs(Workload):
    """A workload plus the one setup to size (the fields of POST /v1/estimate)."""

    gpu: str = _gpu()
    gpus: int = Field(default=1, ge=1, le=4096, description="GPUs to shard over")
    offload: Literal["none", "optimizer", "all"] = Field(default="none", description="DeepSpeed CPU offload")


class FeasibilityArgs(Workload):
    """A workload and the GPU asked about; `gpu_count` is the count asked about (default 1)."""

    gpu: str = _gpu()


class MinGpusArgs(Workload):
    gpu: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS,
                            description="the GPU to count; none: the least GPU memory")
    method_assumed: bool = Field(default=False, description="no method was named: count the other methods too")


class CompareArgs(Workload):
    compare_kind: Literal["gpu", "cloud", "method", "billing"] = "gpu"
    options: list[str] = Field(min_length=1, max_length=6,
                               description="GPU names, clouds (tencent, jdcloud), methods or billing modes")
    by: Literal["cost", "hours"] = "cost"


class SavingsArgs(Workload):
    before: dict[str, Any] = Field(default_factory=dict,
                                   description="the workload fields of the plan compared against, e.g. {method: full}")
    by: Literal["cost", "hours"] = Field(default="cost", description="hours: the question asks about time")


class DiagnoseArgs(Workload):
    """The setup that ran (a workload on `gpu_count` x `gpu`) and what the user saw."""

    gpu: str = _gpu()
    observation: Observation = Field(description="what the run did: kind oom | memory | hours | util | host_oom | "
                                     "slow, with the figure seen (memory_gb, hours per epoch, util_pct)")


class InferenceArgs(ServingWorkload):
    """A serving workload on one GPU type: the body of POST /v1/inference (gpu required)."""

    gpu: str = Field(min_length=1, max_length=MAX_NAME_CHARS, description="the GPU to size on, e.g. L20, A10, H800, "
                     "H20, RTX 4090 (rented here or not)")


class CapacityArgs(BaseModel):
    """The GPUs (and, for context or batch, the model) whose limit is asked."""

    model_config = ConfigDict(extra="forbid")

    gpu: str = _gpu()
    gpu_count: int = Field(default=1, ge=1, le=4096)
    target: Literal["model_size", "context", "batch"] = Field(
        default="model_size", description="model_size: the largest model; context: the longest sequence; "
        "batch: the largest micro-batch")
    method: Method | None = Field(default=None, description="none: full, LoRA and QLoRA side by side (model_size)")
    model: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS,
                              description="needed for context and batch, e.g. Qwen2-7B")
    params_b: float | None = Field(default=None, gt=0, le=5000, description="instead of a model name")
    seq_len: int | None = Field(default=None, ge=16, le=1_048_576)
    micro_batch: int | None = Field(default=None, ge=1, le=4096)
    lora_rank: int | None = Field(default=None, ge=1, le=4096)
    grad_ckpt: bool | None = None
    zero_stage: Literal[0, 1, 2, 3] | None = None

    def workload(self) -> Workload:
        """The workload the engine sizes; a model-size question names no model (the search sets each)."""
        method = self.method or "lora"
        fields = self.model_dump(exclude={"gpu", "gpu_count", "target", "method"}, exclude_none=True)
        if "model" not in fields and "params_b" not in fields:
            if self.target != "model_size":
                raise InvalidInputError(f"model: target {self.target} needs the model.",
                                        "Give model (e.g. Qwen2-7B) or params_b (e.g. 7).")
            fields["params_b"] = 1.0  # replaced by each catalog model the search tries
        return Workload.model_validate({**fields, "method": method})


class FactArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fact: Fact = Field(description="sells: who rents it; supports_fp8/bf16/flash_attn, nvlink: yes/no; memory, "
                       "bandwidth, tflops, cuda: a spec; rdma, billing, regions, price; list: the GPUs a cloud sells")
    gpu: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS)
    clouds: list[CloudName] = Field(default_factory=list, max_length=2, description="empty = both clouds")
    exact: bool = Field(default=False, description="the user named the variant ('A100 80G'), not the family")


class CatalogSearchArgs(CatalogQuery):
    """search_catalog's arguments: the catalog query (service/planner/catalog_view.py: the filters and sort of
    `catalog list` and GET /v1/catalog/instances), what to list, one instance type, and how many rows."""

    kind: Literal["gpus", "instances", "prices"] = Field(
        default="instances", description="instances: instance types with their price under each billing rule, "
        "sorted; prices: one row per price, cheapest per GPU-hour first; gpus: specs (memory and FP8 filter the "
        "GPU; cloud, cards, RDMA and billing the instances it is sold as)")
    instance_type: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS,
                                      description="one instance type, e.g. GT4.4XLARGE96")
    limit: int = Field(default=20, ge=1, le=200, description="rows returned (the total matched is reported)")


class KnowledgeArgs(BaseModel):
    """The arguments of the assistant's search_knowledge."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=2000, description="the question, in the user's language")
    k: int = Field(default=4, ge=1, le=10)
    lang: Literal["zh", "en"] | None = None
    cloud: CloudName | None = None
