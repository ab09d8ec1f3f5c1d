"""The diagnose question type's arguments and typed answer: what the route fills from the frame (the workload, the
card, the observation, a server's setups, the frame's setup and load) and what the answer carries to every surface
(the cause model's diagnosis with its numbers and units, the engine's figures, the verdict)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from service.frame import Hardware, Knobs, Load, Outcome, Setup
from service.planner.causes.types import Cause, Diagnosis
from service.planner.questions.diagnose import Observation
from service.planner.questions.serve_diagnose import ServeCase, ServeDiagnosis
from service.questions.base import AnswerBase, Asked
from service.questions.parts import MemoryTerms, ModelEcho, Part, StrategyEcho
from service.workload import Workload

GIB_PER_B_PARAMS_BF16 = 2e9 / 2**30  # bf16 weights of a billion parameters, GiB


class GeneralCase(BaseModel):
    """What a post states about a run the engine cannot size (no model named, or one the catalog does not hold):
    the observation's kind, a server or a training run, the asked setup and the setups it contrasts."""

    kind: str = Field(description="oom | memory | slow | scaling | util | host_oom | error | hours")
    serving: bool = False
    asked: Setup = Field(default_factory=Setup)
    others: list[Setup] = Field(default_factory=list)


class DiagnoseArgs(Asked):
    gpu: str = Field(description="the GPU the run used: A800, 4090, A100 80G ...")
    observation: Observation | None = Field(default=None, description="what the run did: kind oom | hours | memory "
                                            "| util | host_oom | slow, with the figures the user gave")
    serving: ServeCase | None = Field(default=None, description="a server's run (an engine named or serving words): "
                                      "its setups (engine, GPU x count, TP, flags, what each did) and what is asked")
    engine: str | None = Field(default=None, description="the inference engine, when the run is a server (vllm ...)")
    mentions_bf16: bool = Field(default=False, description="the user runs bf16")
    model_named: bool = Field(default=True, description="false: no model was named; only catalog rules answer")
    gpu_assumed: bool = Field(default=False, description="the GPU was not named: the answer says which was assumed")
    engine_assumed: bool = Field(default=False, description="a server's engine was not named: vLLM's defaults assumed")
    served: bool = Field(default=False, description="memory seen on a server (not a training run)")
    setup: Setup | None = Field(default=None, description="the question frame's setup: its knobs (strategy, "
                                "precision, flags ...), hardware (links, nodes, host RAM) and what was seen (the "
                                "figures of a pasted CUDA error, step time, TTFT); the cause model reads it")
    load: Load | None = Field(default=None, description="a server's load: concurrency, request rate, lengths")
    general: GeneralCase | None = Field(default=None, description="the post's setups for the causes that need no "
                                        "size: answered from them when the model is not named or not known")


# Workload fields the cause model reads as the run's knobs (the same name on both), and the observation's figures
_KNOBS = ("seq_len", "micro_batch", "lora_rank", "zero_stage", "precision", "optimizer", "attention", "loss",
          "quant_bits", "framework")
_SEEN = ("memory_gb", "hours", "tokens_per_s", "util_pct")


def with_setup(args: DiagnoseArgs) -> DiagnoseArgs:
    """A caller that sends no question frame (an MCP client, the API) still gets the cause model: the setup it reads
    is built from the arguments' own fields, those the caller set only (an unset one stays unstated)."""
    if args.setup is not None or not args.model_named:
        return args
    knobs = {k: getattr(args, k) for k in _KNOBS if getattr(args, k) is not None}
    if args.grad_ckpt is not None:
        knobs["checkpointing"] = args.grad_ckpt
    if args.engine:
        knobs["engine"] = args.engine
    o = args.observation
    seen = None if o is None else Outcome(kind=o.kind, **{k: getattr(o, k) for k in _SEEN if getattr(o, k)})
    setup = Setup(method=args.method if "method" in args.model_fields_set else None, knobs=Knobs(**knobs),
                  hardware=Hardware(gpu=args.gpu, gpu_count=args.gpu_count), outcome=seen)
    return args.model_copy(update={"setup": setup})


class Finding(Part):
    """A cause or a fix of the training estimate: its code (the renderer's words) and the figures that re-sizing
    gave it."""

    code: str
    per_gpu_gib: float | None = None
    fits: bool | None = None
    training_hours: float | None = None
    strategy: StrategyEcho | None = None
    gpu_count: int | None = None
    seq_len: int | None = None
    host_ram_gib: float | None = None
    ranks: int | None = None
    fraction: float | None = None
    reserved_gib: float | None = None
    speedup: float | None = None
    gpus: int | None = None
    ref: int | None = None


class DiagnoseAnswer(AnswerBase):
    kind: Literal["diagnose"] = "diagnose"
    observation: Observation | None = None
    engine: str | None = Field(default=None, description="a server's engine, as named or assumed")
    diagnosis: Diagnosis | None = Field(default=None, description="the cause model: the causes that apply, ranked "
                                        "by the gap each explains (a number with its unit), each with its fix and "
                                        "the figure after it; the engine's figure beside the user's; the verdict; "
                                        "the one setting that would settle it; an impossible figure")
    general: Diagnosis | None = Field(default=None, description="a run the engine could not size: the causes the "
                                      "stated setup points to, without figures, and the model asked for")
    general_also: list[Cause] = Field(default_factory=list, description="a sized diagnosis: the causes the stated "
                                      "setup points to that the sized ones do not name (no figures)")
    general_leads: bool = Field(default=False, description="the first of general_also gave the verdict the sized "
                                "figures left open: it leads the answer")
    unknown_model: str | None = Field(default=None, description="the model as named, when the catalog lacks it")
    serving: ServeDiagnosis | None = Field(default=None, description="a server diagnosed: each setup's engine "
                                           "figures, the verdict, the cause and the one flag that fixes it")
    gpu: str
    gpu_name: str
    gpu_count: int
    gpu_memory_gib: float
    usable_gib: float
    sized: bool = True
    expected: bool | None = None
    rule: str | None = None
    causes: list[Finding] = Field(default_factory=list)
    fixes: list[Finding] = Field(default_factory=list)
    per_gpu_gib: float | None = None
    fits: bool | None = None
    memory: MemoryTerms | None = None
    strategy: StrategyEcho | None = None
    model: ModelEcho | None = None
    training_hours: float | None = None
    throughput_tokens_per_s: float | None = None
    estimated_hours_per_epoch: float | None = None
    estimated_hours_run: float | None = None
    whole_run: bool | None = None
    ratio: float | None = None
    tokens_per_s: float | None = None
    tokens_in_observed_time: int | None = None
    data_unknown: bool | None = None
    speedup_vs_reference: float | None = None
    reference_gpus: int | None = None
    observed_gib: float | None = None
    host_ram_needed_gib: float | None = None
    epochs: float | None = Field(default=None, description="the epochs the whole run's estimate covers")
    host_copies_gib: float | None = Field(default=None, description="host RAM of one full model copy per process")
    ranks: int | None = None
    host_ram_seen_gb: float | None = Field(default=None, description="the host RAM the post states, as written")
    util_high: bool | None = None
    observed_tokens_per_s: float | None = None
    workload: Workload | None = None
    assumptions: list[str] = Field(default_factory=list)
    assumptions_zh: list[str] = Field(default_factory=list)

    def facts(self) -> dict[str, float]:
        if self.serving is not None:
            f = self.serving.setups[0]
            return {k: float(v) for k, v in (("per_gpu_gib", f.weights_gib_per_gpu + f.kv_cache_gib_per_gpu),
                                              ("weights_gib", f.weights_gib_per_gpu * f.tp * f.pp),
                                              ("tokens_per_s", f.tokens_per_s_single),
                                              ("kv_tokens", f.kv_capacity_tokens)) if v is not None}
        weights = None
        if self.model is not None and self.strategy is not None:
            per_param = {"qlora": 0.52}.get(self.strategy.method, 1.0)
            weights = self.model.params_b * GIB_PER_B_PARAMS_BF16 * per_param
        return {k: float(v) for k, v in (("per_gpu_gib", self.per_gpu_gib), ("weights_gib", weights),
                                          ("hours", self.estimated_hours_per_epoch or self.estimated_hours_run),
                                          ("tokens_per_s", self.tokens_per_s)) if v is not None}
