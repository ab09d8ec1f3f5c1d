"""Size one explicit setup (model x method x GPU x count) without the catalog search: `gpu-advisor estimate`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from service.calibration.store import calibration_factors
from service.catalog.loader import Catalog
from service.catalog.queries import resolve_gpu
from service.catalog.schema import ModelSpec
from service.planner.resolve import resolve_job
from service.planner.strategy import HEADROOM, base_setup
from service.sizing.host import gpu_notes
from service.sizing.memory import estimate_memory
from service.sizing.params import count_params
from service.sizing.throughput import Cluster, training_time
from service.workload import Workload


@dataclass(frozen=True)
class EstimateRequest:
    workload: Workload
    gpu: str
    gpus: int = 1
    offload: Literal["none", "optimizer", "all"] = "none"


def model_dict(m: ModelSpec) -> dict[str, object]:
    c = count_params(m)
    return {"id": m.id, "name": m.name, "family": m.family, "kind": m.kind,
            "params_b": round(m.params_published_b, 3), "params_counted_b": round(c.total / 1e9, 3),
            "active_params_b": m.active_params_b, "num_layers": m.num_layers, "hidden_size": m.hidden_size,
            "vocab_size": m.vocab_size, "source": m.source}


def estimate(req: EstimateRequest, cat: Catalog) -> dict[str, object]:
    w = req.workload
    job = resolve_job(w, cat.models)
    gpu, gpu_note = resolve_gpu(req.gpu, cat.gpus)
    assumptions = list(job.assumptions) + ([gpu_note] if gpu_note else [])
    setup = base_setup(job, w, gpu)
    stage = w.zero_stage
    if stage is None:
        stage = 3 if req.gpus > 1 and job.method in ("full", "pretrain", "freeze") else 0
        if req.gpus > 1:
            assumptions.append(f"ZeRO stage assumed {stage} on {req.gpus} GPUs.")
    if w.grad_ckpt is None:
        assumptions.append("Gradient checkpointing assumed on (LLaMA-Factory's default).")
    setup = replace(setup, n_gpus=req.gpus, zero_stage=stage, offload=req.offload)
    mem = estimate_memory(job.model, setup)
    trainable_fraction = mem.trainable_params / max(1.0, job.model.params_published_b * 1e9)
    t = training_time(job.model, gpu, replace(setup, seq_len=job.avg_seq_len), job.tokens_total, req.gpus,
                      1.0, trainable_fraction, samples=job.samples_total,
                      cluster=Cluster(req.gpus, 1), calibration=calibration_factors().get(gpu.id, 1.0))
    assumptions.append(f"MFU {t.mfu.value:.2f}: {t.mfu.source}.")
    if t.offload_slowdown > 1:
        assumptions.append(f"CPU offload: {t.offload_slowdown:g}x slower (estimate), included in tokens/s and hours.")
    warnings = [n.as_dict() for n in gpu_notes(gpu, req.gpus, 1, rdma=False)]
    if not any(r.gpu == gpu.id for r in cat.instances):  # consumer, on-premise or non-NVIDIA: sized, not rented
        warnings.append({"code": "not_rented", "severity": "info",
                         "message": f"No Tencent Cloud or JD Cloud instance in this catalog has the {gpu.name}: "
                                    "the figures size your own hardware.",
                         "message_zh": f"本目录中腾讯云和京东云都没有搭载 {gpu.name} 的实例：以上数字按自有硬件估算。"})
    fits = mem.per_gpu_gib <= HEADROOM * gpu.memory_gib
    if not fits:
        warnings.insert(0, {"code": "does_not_fit", "severity": "warning",
                            "message": f"Needs {mem.per_gpu_gib:.1f} GiB per GPU; {gpu.name} has "
                                       f"{gpu.memory_gib:g} GiB ({HEADROOM:.0%} usable).",
                            "message_zh": f"每卡需要 {mem.per_gpu_gib:.1f} GiB 显存，{gpu.name} 只有 "
                                          f"{gpu.memory_gib:g} GiB（可用约 {HEADROOM:.0%}）。"})
    return {
        "model": model_dict(job.model),
        "workload": w.model_dump(),
        "gpu": gpu.id, "gpus": req.gpus,
        "strategy": {"method": setup.method, "quant_bits": setup.quant_bits, "zero_stage": stage,
                     "offload": setup.offload, "grad_ckpt": setup.grad_ckpt, "precision": setup.precision,
                     "seq_len": setup.seq_len, "micro_batch": setup.micro_batch, "lora_rank": setup.lora_rank},
        "memory": mem.as_dict(),
        "trainable_params": round(mem.trainable_params),
        "host_ram_needed_gib": round(mem.host_ram_gib, 1),
        "memory_notes": list(mem.notes),
        "gpu_memory_gib": gpu.memory_gib,
        "fits": fits,
        "tokens_total": t.tokens_total,
        "flops_per_token": t.flops_per_token,
        "throughput_tokens_per_s": round(t.throughput_tokens_per_s, 1),
        "training_hours": round(t.hours, 2),
        "assumptions": assumptions,
        "warnings": warnings,
    }
