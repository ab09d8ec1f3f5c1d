"""The cases from what a diagnosis routes: the workload (model, method, data, stated knobs), the card and count, and
the question frame's setup (knobs, hardware, outcome) and load. The same resolution as `gpu-advisor estimate`
(service/planner/estimate.py): the framework's defaults fill what the user did not state; the stated strategy
decides the ZeRO stage (torchrun / DDP: none; FSDP: full shard; device_map: the layers split over the cards).
"""

from __future__ import annotations

from dataclasses import replace

from service.catalog.loader import Catalog
from service.catalog.schema import GpuSpec
from service.frame import Load, Outcome, Setup
from service.planner.causes.cases import FULL_METHODS, RL_STAGES, ServeRun, TrainCase
from service.planner.resolve import resolve_job
from service.planner.serving_size import resolve_serving_model
from service.planner.settings import settings_for
from service.planner.strategy import base_setup, configured
from service.serving_workload import ServingWorkload
from service.sizing.comm import interconnect
from service.sizing.serving import layout
from service.sizing.serving.types import ServingSetup
from service.sizing.vision import image_tokens
from service.workload import Workload

SIZED_AS = {"vllm": "vllm", "sglang": "sglang", "lmdeploy": "lmdeploy", "trtllm": "trtllm", "tgi": "vllm",
            "mindie": "vllm", "xinference": "vllm", "vllm-ascend": "vllm"}
RL_PROMPT_TOKENS = 512  # a GRPO prompt when the post gives none (TRL max_prompt_length's default)
WEIGHTS = ("bf16", "fp16", "fp8", "int8", "int4", "mxfp4")
TRAIN_KNOBS = ("micro_batch", "seq_len", "checkpointing", "attention", "loss", "optimizer", "precision",
               "zero_stage", "strategy", "offload", "grad_accum", "num_generations", "completion_len", "max_pixels",
               "image_slices", "video_frames")
SERVE_KNOBS = ("engine", "tp", "pp", "max_model_len", "gpu_memory_utilization", "max_num_seqs",
               "max_num_batched_tokens", "weights", "kv_dtype")


def _stage_of(w: Workload, method: str, strategy: str | None) -> int:
    if strategy in ("ddp", "single"):
        return 0
    if w.zero_stage is not None:
        return w.zero_stage
    if strategy in ("zero", "fsdp", "device_map"):
        return 3 if method in FULL_METHODS or strategy != "zero" else 2
    return 0


def train_case(cat: Catalog, w: Workload, gpu: GpuSpec, gpus: int, setup: Setup, nodes: int | None = None
               ) -> tuple[TrainCase, list[str]]:
    """The training run as the engine sizes it, and the knobs the user stated."""
    k, hw = setup.knobs, setup.hardware
    job = resolve_job(w, cat.models)
    n = max(1, gpus)
    stage = _stage_of(w, job.method, k.strategy) if n > 1 else 0
    if n > 1 and k.strategy is None and w.zero_stage is None and job.method in FULL_METHODS:
        stage = 3  # what the estimate assumes for a full fine-tune on several cards
    offload = "optimizer" if k.offload else "none"
    if offload != "none":
        stage = max(2, stage)
    settings, _ = settings_for(w, job.method, gpu, n, stage)
    base = base_setup(job, w, gpu)
    s = configured(base, w, gpu, n, stage, offload, settings.grad_ckpt)  # type: ignore[arg-type]
    if k.strategy == "fsdp":
        s = replace(s, sharding="fsdp")
    node_count = max(1, nodes or hw.nodes or 1)
    link = "rdma" if hw.interconnect == "rdma" else "tcp" if hw.interconnect == "ethernet" and node_count > 1 \
        else s.interconnect
    s = replace(s, interconnect=interconnect(gpu, node_count, link != "tcp") if node_count > 1 else link,
                grad_accum=k.grad_accum or s.grad_accum)
    stated = {name for name in TRAIN_KNOBS if getattr(k, name, None) is not None}
    stated |= {name for name in ("micro_batch", "seq_len", "zero_stage") if getattr(w, name) is not None}
    if w.checkpointing is not None:
        stated.add("checkpointing")
    if job.stage in RL_STAGES and (k.num_generations or k.completion_len):
        prompt = w.seq_len or RL_PROMPT_TOKENS
        s = replace(s, seq_len=prompt + (k.completion_len or 1024),
                    micro_batch=w.micro_batch or k.num_generations or s.micro_batch)
    vision = image_tokens(job.model, k.max_pixels, k.image_slices, k.video_frames)
    if vision is not None:
        s = replace(s, seq_len=s.seq_len + vision)
    if hw.gpu_count or hw.gpus_per_node:
        stated.add("gpus")
    case = TrainCase(model=job.model, gpu=gpu, gpus=n, setup=s, stated=frozenset(stated), stage=job.stage,
                     knobs=k, hardware=hw, seen=setup.outcome or Outcome(), tokens=job.tokens_total,
                     nodes=node_count, time_seq=None if vision or job.stage in RL_STAGES else job.avg_seq_len)
    return case, sorted(stated)


def serve_run(cat: Catalog, model: str, gpu: GpuSpec, setup: Setup, load: Load) -> ServeRun:
    """The server as the serving engine sizes it: the engine's defaults for what the post does not state."""
    k, hw = setup.knobs, setup.hardware
    spec, _ = resolve_serving_model(ServingWorkload(model=model), cat.models)
    engine = (k.engine or "vllm").lower()
    weights = k.weights if k.weights in WEIGHTS else spec.released_dtype
    count = max(1, hw.gpu_count or 1)
    tp, pp = (k.tp, k.pp or 1) if k.tp else ((max(1, count // k.pp), k.pp) if k.pp
                                              else layout.default_layout(count))
    sized = SIZED_AS.get(engine, "vllm")
    serving = ServingSetup(engine=sized,  # type: ignore[arg-type]
                           weights=weights,  # type: ignore[arg-type]
                           kv_dtype="fp8" if k.kv_dtype == "fp8" else "auto", tp=tp, pp=pp,
                           mem_fraction=k.gpu_memory_utilization, max_model_len=k.max_model_len,
                           max_num_seqs=k.max_num_seqs, max_num_batched_tokens=k.max_num_batched_tokens,
                           seen_running=setup.outcome is not None and setup.outcome.seen_running)
    stated = {name for name in SERVE_KNOBS if getattr(k, name, None) is not None}
    return ServeRun(model=spec, gpu=gpu, engine=engine, setup=serving, stated=frozenset(stated), knobs=k,
                    hardware=hw, seen=setup.outcome or Outcome(), load=load)
