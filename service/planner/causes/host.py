"""Causes of the host's RAM running out (the OOM killer, SIGKILL, 'Killed'): each a pure function of the
`TrainCase`, the host GiB it explains, and the fix.

    rank_copies     every rank (or RL rollout worker) on the machine loads a full copy of the weights on the CPU
                    before sharding: N x the model (`from_pretrained` without ZeRO-3's zero.Init or FSDP's
                    rank-0 loading; device_map=auto under torchrun)
    offload_host    ZeRO / FSDP CPU offload keeps the optimizer states (and parameters) in host RAM: DeepSpeed's
                    estimator, x1.5 buffer (service/sizing/memory.py)
"""

from __future__ import annotations

from service.planner.causes.cases import RL_STAGES, TrainCase
from service.planner.causes.types import Cause, Fix, Quantity
from service.sizing.params import count_params
from service.sizing.types import GIB

LOAD_BYTES = 2.0  # a checkpoint loaded in its bf16 dtype (torch_dtype=bfloat16: what LLaMA-Factory, TRL, verl pass)


def _gib(x: float) -> Quantity:
    return Quantity.of(x, "GiB", 1)


def host_ram_gb(case: TrainCase) -> float | None:
    """The machine's RAM as the post states it (its instance's, or the figure next to the kill)."""
    return case.hardware.host_ram_gb or case.seen.memory_gb


def rank_copies(case: TrainCase) -> Cause:
    s = case.setup
    ranks = case.gpus_per_node
    rl = case.stage in RL_STAGES
    if ranks <= 1 or (s.zero_stage >= 3 and case.knobs.strategy != "device_map" and not rl):
        return Cause.no("rank_copies")
    one = count_params(case.model).total * LOAD_BYTES / GIB
    total = ranks * one
    ram = host_ram_gb(case)
    stated = case.is_stated("gpus") or case.knobs.strategy in ("ddp", "device_map")
    return Cause(code="rollout_copies" if rl else "rank_copies", explains=_gib(total), stated=stated,
                 fix=Fix(code="rank0_load", setting="deepspeed zero3 (zero.Init) / fsdp_cpu_ram_efficient_loading",
                         fixed=_gib(one), fits=None if ram is None else one * GIB / 1e9 < ram),
                 detail={"ranks": ranks, "copy_gib": round(one, 1), "ram_gb": ram or 0.0})


def offload_host(case: TrainCase) -> Cause:
    s = case.setup
    if s.offload == "none":
        return Cause.no("offload_host")
    need = case.memory().host_ram_gib
    if need <= 0:
        return Cause.no("offload_host")
    ram = host_ram_gb(case)
    less = case.memory(offload="optimizer").host_ram_gib if s.offload == "all" else 0.0
    fix = Fix(code="offload_optimizer_only", setting="offload_param: none", fixed=_gib(less)) if less else \
        Fix(code="no_offload_more_gpus", setting="offload_optimizer: none, ZeRO-3 over more GPUs")
    return Cause(code="offload_host", explains=_gib(need), fix=fix,
                 detail={"ram_gb": ram or 0.0, "nodes": case.nodes})


HOST_CAUSES = (rank_copies, offload_host)
