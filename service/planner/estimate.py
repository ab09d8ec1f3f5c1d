"""Size one explicit setup (model x method x GPU x count) without the catalog search: `gpu-advisor estimate`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from service.calibration.store import calibration_factors
from service.catalog.loader import Catalog
from service.catalog.queries import resolve_gpu
from service.catalog.schema import ModelSpec
from service.planner.generic import is_estimated
from service.planner.resolve import resolve_job
from service.planner.room import Room, room_hint
from service.planner.settings import framework_note, require_precision, settings_for
from service.planner.strategy import base_setup, configured
from service.sizing.expected_error import time_error_fields
from service.sizing.frameworks import DEFAULT_FRAMEWORK
from service.sizing.host import gpu_notes
from service.sizing.memory import estimate_memory
from service.sizing.params import count_params
from service.sizing.throughput import Cluster, training_time
from service.sizing.types import TrainSetup
from service.sizing.verdict import Verdict, card_capacity_gib, fit_verdict
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
            "vocab_size": m.vocab_size, "source": m.source, "estimated": is_estimated(m)}


def _verdict_warning(mem_need: float, v: Verdict, gpu_name: str, room: Room | None) -> dict[str, str]:
    fix = f" {room.change[0].upper()}{room.change[1:]} gives room: {room.need_gib:.1f} GiB." if room else ""
    fix_zh = f"{room.change_zh}可腾出空间：约 {room.need_gib:.1f} GiB。" if room else ""
    if v.status == "does_not_fit":
        return {"code": "does_not_fit", "severity": "warning",
                "message": f"Needs {mem_need:.1f} GiB per GPU (reserved + CUDA context + NCCL); {gpu_name} offers "
                           f"{v.capacity_gib:.1f} GiB: {-v.margin_gib:.1f} GiB short.{fix}",
                "message_zh": f"每卡需要 {mem_need:.1f} GiB 显存（reserved + CUDA 上下文 + NCCL），{gpu_name} 可用 "
                              f"{v.capacity_gib:.1f} GiB，缺 {-v.margin_gib:.1f} GiB。{fix_zh}"}
    return {"code": "memory_tight", "severity": "warning",
            "message": f"Tight: needs {mem_need:.1f} GiB of the {v.capacity_gib:.1f} GiB {gpu_name} offers "
                       f"({v.margin_gib:.1f} GiB, {v.margin_pct:.1f} % margin; allocator spikes can OOM).{fix}",
            "message_zh": f"显存紧张：需要 {mem_need:.1f} GiB，{gpu_name} 可用 {v.capacity_gib:.1f} GiB（余量 "
                          f"{v.margin_gib:.1f} GiB，{v.margin_pct:.1f} %，分配器峰值可能 OOM）。{fix_zh}"}


def estimate(req: EstimateRequest, cat: Catalog) -> dict[str, object]:
    w = req.workload
    job = resolve_job(w, cat.models)
    gpu, gpu_note = resolve_gpu(req.gpu, cat.gpus)
    require_precision(w, gpu)
    assumptions = list(job.assumptions) + ([gpu_note] if gpu_note else [])
    assumptions_zh = list(job.assumptions_zh) + ([gpu_note] if gpu_note else [])
    stage = w.zero_stage
    if stage is None:
        stage = 3 if req.gpus > 1 and job.method in ("full", "pretrain", "freeze") else 0
        if req.gpus > 1:
            assumptions.append(f"ZeRO stage assumed {stage} on {req.gpus} GPUs.")
            assumptions_zh.append(f"{req.gpus} 卡按 ZeRO-{stage} 估算。")
    if req.offload != "none" and stage < 2:
        stage = 3 if req.offload == "all" else 2  # DeepSpeed offloads from ZeRO-2 (optimizer) / ZeRO-3 (params)
    settings, notes = settings_for(w, job.method, gpu, req.gpus, stage)
    en, zh = framework_note(w)
    assumptions += [en, *(f"{a}." for a, _ in notes)]
    assumptions_zh += [zh, *(f"{b}。" for _, b in notes)]
    setup = configured(base_setup(job, w, gpu), w, gpu, req.gpus, stage, req.offload, settings.grad_ckpt)
    mem = estimate_memory(job.model, setup)
    trainable_fraction = mem.trainable_params / max(1.0, job.model.params_published_b * 1e9)
    t = training_time(job.model, gpu, replace(setup, seq_len=job.avg_seq_len), job.tokens_total, req.gpus,
                      1.0, trainable_fraction, samples=job.samples_total,
                      cluster=Cluster(req.gpus, 1), calibration=calibration_factors().get(gpu.id, 1.0))
    assumptions.append(f"MFU {t.mfu.value:.2f}: {t.mfu.source}.")
    if t.offload_slowdown > 1:
        assumptions.append(f"CPU offload: {t.offload_slowdown:g}x slower (estimate), included in tokens/s and hours.")
    warnings = [n.as_dict() for n in gpu_notes(gpu, req.gpus, 1, rdma=False)]
    if req.gpus == 1 and stage >= 1 and req.offload == "none":
        # ZeRO shards over the data-parallel GPUs: on one GPU it shards nothing (DeepSpeed still keeps its master)
        warnings.append({"code": "zero_one_gpu", "severity": "warning",
                         "message": f"ZeRO-{stage} on one GPU shards nothing: every state stays on the card. Use 2 or "
                                    "more GPUs to shard, or offload the optimizer (--offload optimizer) to CPU RAM.",
                         "message_zh": f"单卡上的 ZeRO-{stage} 没有可切分的对象：所有状态仍在这张卡上。要切分请用 2 张及以上的卡，"
                                       "或把优化器卸载到 CPU 内存（--offload optimizer）。"})
    if not any(r.gpu == gpu.id for r in cat.instances):  # consumer, on-premise or non-NVIDIA: sized, not rented
        warnings.append({"code": "not_rented", "severity": "info",
                         "message": f"No Tencent Cloud or JD Cloud instance in this catalog has the {gpu.name}: "
                                    "the figures size your own hardware.",
                         "message_zh": f"本目录中腾讯云和京东云都没有搭载 {gpu.name} 的实例：以上数字按自有硬件估算。"})
    verdict = fit_verdict(mem.per_gpu_gib, card_capacity_gib(gpu), mem.expected_error)
    room = room_hint(job.model, setup, verdict.capacity_gib) if verdict.status != "fits" else None
    if verdict.status != "fits":
        warnings.insert(0, _verdict_warning(mem.per_gpu_gib, verdict, gpu.name, room))
    return {
        "model": model_dict(job.model),
        "workload": w.model_dump(),
        "gpu": gpu.id, "gpus": req.gpus,
        "strategy": strategy_dict(setup, w),
        "memory": mem.as_dict(),
        "memory_verdict": {**verdict.as_dict(), "room": room.as_dict() if room else None},
        "trainable_params": round(mem.trainable_params),
        "host_ram_needed_gib": round(mem.host_ram_gib, 1),
        "memory_notes": list(mem.notes),
        "gpu_memory_gib": gpu.memory_gib,
        "fits": verdict.status == "fits",
        "verdict": verdict.status,
        "tokens_total": t.tokens_total,
        "flops_per_token": t.flops_per_token,
        "throughput_tokens_per_s": round(t.throughput_tokens_per_s, 1),
        "training_hours": round(t.hours, 2),
        **time_error_fields(t),
        "assumptions": assumptions,
        "assumptions_zh": assumptions_zh,
        "warnings": warnings,
    }


def strategy_dict(s: TrainSetup, w: Workload) -> dict[str, object]:
    """The setup as estimated, in the public schema's spelling (what the launch bundle must reproduce)."""
    adapters = s.method in ("lora", "qlora")
    return {"method": s.method, "quant_bits": s.quant_bits, "zero_stage": s.zero_stage, "offload": s.offload,
            "grad_ckpt": s.grad_ckpt, "activation_checkpointing": s.checkpointing,
            "precision": PRECISION_PUBLIC.get(s.precision, s.precision), "optimizer": s.optimizer.replace("_", "-"),
            "optimizer_in_backward": s.optimizer_in_bwd, "attention": s.attention, "loss": s.loss.replace("_", "-"),
            "sharding": s.sharding if s.zero_stage > 0 else None, "framework": w.framework or DEFAULT_FRAMEWORK,
            "fp32_weights": s.fp32_weights, "seq_len": s.seq_len, "micro_batch": s.micro_batch,
            "lora_rank": s.lora_rank, "lora_targets": s.lora_targets.replace("_", "-") if adapters else None,
            "lora_modules_to_save": list(s.lora_extra) if adapters else None,
            "kbit_upcast": s.kbit_upcast if s.method == "qlora" else None}


PRECISION_PUBLIC = {"bf16": "amp-bf16", "pure_bf16": "pure-bf16"}
