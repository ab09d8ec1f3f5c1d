"""Causes that apply whatever the model's size: a diagnosis the engine cannot size (no model named, or one the
catalog does not hold) still names the cause the setup points to. Each cause reads only what the post states: the
asked setup's knobs, hardware and outcome, the setups it contrasts ('SFT fits, DPO OOMs', 'QLoRA 5x slower than
LoRA', 'TGI faster than vLLM') and the card's catalog entry (its compute capability). No figure is made up: a
cause carries the catalog's numbers only (a card's compute capability, the cards x BF16 TFLOPS of a setup compared)
and the user's own (their num_ctx, their card count).

    Signs(kind, serving, asked, others, gpu)   what the post states (general_signs.py)
    general_diagnosis(signs)                   the causes that apply, the deciding one first; its verdict

The training causes are here, a server's in general_serve.py.
"""

from __future__ import annotations

from service.catalog.schema import GpuSpec
from service.frame import Setup
from service.planner.causes import general_serve as serve
from service.planner.causes.general_signs import (
    COMPUTE_GAP,
    COMPUTE_SAME,
    HANG_MEMORY_GB,
    MEMORY,
    NODE_GPUS,
    RDMA_GBPS,
    RL_OBJECTIVES,
    Found,
    Rule,
    Signs,
    cause_of,
)
from service.planner.causes.types import Diagnosis, Observed

__all__ = ["Signs", "general_diagnosis"]

UTIL_LOW = 60.0  # a training GPU's utilisation at or under this (%): it waits more than it computes
UTIL_IDLE = 5.0  # at or under this nothing runs on it (a hang, the job on the CPU): not a slow data loader


# --- training -------------------------------------------------------------------------------------------------
def _ref_model(s: Signs) -> Found | None:
    if s.kind in MEMORY and s.asked.objective in RL_OBJECTIVES:
        return Found(cause_of("ref_model", "ref_model", "precompute_ref_log_probs: true"), True)
    return None


def _replicas(s: Signs) -> Found | None:
    k = s.asked.knobs
    sharded = k.zero_stage == 3 or k.strategy == "fsdp"
    if s.kind in MEMORY and not s.serving and s.gpus() > 1 and not sharded and not _hang(s):
        return Found(cause_of("replicas", "replicas", "zero_stage: 3", ranks=float(s.gpus())), True)
    return None


def _lora_activations(s: Signs) -> Found | None:
    lora = s.asked.method in ("lora", "qlora") or bool({"lora", "qlora"} & s.other_methods())
    full = s.asked.method == "full" or "full" in s.other_methods()
    if s.kind in (*MEMORY, "hours", "slow") and lora and full:
        verdict = False if s.kind in MEMORY else None
        return Found(cause_of("lora_activations", "checkpointing", "gradient_checkpointing: true"), verdict)
    return None


def _fp32_weights(s: Signs) -> Found | None:
    """LoRA no lighter than full fine-tuning, no precision stated: the frozen weights loaded in fp32 (4 bytes a
    parameter, twice bf16) weigh what LoRA saved."""
    lora = s.asked.method in ("lora", "qlora") or bool({"lora", "qlora"} & s.other_methods())
    full = s.asked.method == "full" or "full" in s.other_methods()
    stated = any(x.knobs.precision or x.knobs.quant_bits for x in (s.asked, *s.others))
    if s.kind in MEMORY and lora and full and not stated:
        return Found(cause_of("fp32_weights", "half_weights", "torch_dtype=torch.bfloat16"), None)
    return None


def _hang(s: Signs) -> bool:
    """Several cards stuck (an error, or memory barely used at full utilisation) where one card trained."""
    o = s.asked.outcome
    one_worked = any(x.outcome is not None and x.outcome.status == "worked" and (x.hardware.gpu_count or 0) == 1
                     for x in s.others)
    idle = o is not None and o.memory_gb is not None and o.memory_gb <= HANG_MEMORY_GB
    return not s.serving and s.gpus() > 1 and one_worked and s.kind in ("error", "slow", "util") and idle


def _nccl_hang(s: Signs) -> Found | None:
    if _hang(s):
        return Found(cause_of("nccl_hang", "nccl_hang", "NCCL_P2P_DISABLE=1"), False)
    return None


def _zero_same(s: Signs) -> Found | None:
    stages = {x.knobs.zero_stage for x in (s.asked, *s.others) if x.knobs.zero_stage is not None}
    if s.kind in MEMORY and not s.serving and len(stages) > 1:
        return Found(cause_of("zero_same", "checkpointing", "gradient_checkpointing: true"), None)
    return None


def _zero3_gather(s: Signs) -> Found | None:
    k = s.asked.knobs
    against_fsdp = k.framework == "deepspeed" and any(x.knobs.strategy == "fsdp" for x in s.others)
    if s.kind in ("slow", "util", "hours") and not s.serving and (k.zero_stage == 3 or against_fsdp):
        return Found(cause_of("zero3_gather", "zero3_gather", "stage3_param_persistence_threshold"), None)
    return None


def _small_batch(s: Signs) -> Found | None:
    if s.kind in ("slow", "hours") and not s.serving and not s.asked.knobs.offload:
        return Found(cause_of("small_batch", "small_batch", "packing: true"), None)
    return None


def _compute_ratio(s: Signs) -> tuple[float, Setup, GpuSpec] | None:
    """The compared setup's BF16 compute (cards x dense TFLOPS) over the asked one's, when both cards are known."""
    if s.gpu is None or s.serving:
        return None
    for other, g in zip(s.others, s.other_gpus, strict=False):
        if g is None:
            continue
        n_other = other.hardware.gpu_count or s.gpus()
        if g.id == s.gpu.id and n_other == s.gpus():
            continue
        return n_other * g.dense_16bit_tflops / (s.gpus() * s.gpu.dense_16bit_tflops), other, g
    return None


def _compute_gap(s: Signs) -> Found | None:
    if s.kind not in ("hours", "slow", "scaling", "util"):
        return None
    found = _compute_ratio(s)
    if found is None:
        return None
    ratio, other, g = found
    n_other = float(other.hardware.gpu_count or s.gpus())
    if ratio >= COMPUTE_GAP:
        return Found(cause_of("compute_gap", ratio=round(ratio, 1), other_count=n_other, count=float(s.gpus())), True)
    if ratio >= 1 / COMPUTE_SAME and s.gpu is not None and g.dense_16bit_tflops == s.gpu.dense_16bit_tflops:
        return Found(cause_of("same_compute", "same_compute"), True)
    if ratio <= 1 / COMPUTE_GAP:
        return Found(cause_of("compute_unused", "data_bound", ratio=round(1 / ratio, 1)), False)
    return None


def _flash_arch(s: Signs) -> Found | None:
    g = s.gpu
    if s.asked.knobs.attention == "flash" and g is not None and not g.supports_flash_attn2:
        cc = float(g.compute_capability) if g.compute_capability else 0.0
        return Found(cause_of("flash_arch", "flash_arch", "attn_implementation: sdpa", cc=cc), True)
    return None


def _multi_node(s: Signs) -> bool:
    hw = s.asked.hardware
    return (hw.nodes or 1) > 1 or s.gpus() > NODE_GPUS


def _rdma_stated(s: Signs) -> bool | None:
    hw = s.asked.hardware
    if hw.interconnect == "rdma" or (hw.instance or "").upper().startswith("HCC"):
        return True
    if hw.interconnect in ("ethernet", "pcie") or (hw.network_gbps is not None and hw.network_gbps < RDMA_GBPS):
        return False
    if hw.instance and any((o.hardware.instance or "").upper().startswith("HCC") for o in s.others):
        return False  # 'PNV6 slower than HCCPNV6': the asked one is the plain instance
    return None


def _rdma(s: Signs) -> Found | None:
    if s.serving or s.kind not in ("slow", "scaling", "util") or not _multi_node(s):
        return None
    rdma = _rdma_stated(s)
    if rdma is False:
        return Found(cause_of("no_rdma", "no_rdma", "NCCL_IB_HCA"), True)
    if rdma is True:
        return Found(cause_of("rdma_unused", "rdma_unused", "NCCL_DEBUG=INFO"), False)
    return Found(cause_of("no_rdma", "no_rdma", "NCCL_DEBUG=INFO"), None)


def _offload(s: Signs) -> Found | None:
    if s.kind in ("slow", "util", "scaling") and s.asked.knobs.offload:
        return Found(cause_of("offload", "offload", "offload_optimizer: none"), True)
    return None


def _checkpointing(s: Signs) -> Found | None:
    if s.kind in ("slow", "util") and s.asked.knobs.checkpointing and not s.serving:
        return Found(cause_of("checkpointing_slow", "checkpointing_off", "gradient_checkpointing: false"), True)
    return None


def _qlora(s: Signs) -> Found | None:
    if s.kind in ("slow", "util") and s.asked.method == "qlora" and not s.serving:
        return Found(cause_of("qlora_dequant", "qlora_dequant"), None)
    return None


def _scaling(s: Signs) -> Found | None:
    if s.serving or s.kind != "scaling":
        return None
    pcie = s.asked.hardware.interconnect == "pcie"
    return Found(cause_of("grad_sync", "grad_sync", "gradient_accumulation_steps"), True if pcie else None)


def _steps(s: Signs) -> Found | None:
    if s.serving or s.kind != "scaling":
        return None
    return Found(cause_of("global_batch", "global_batch"), None)


def _util_low(s: Signs) -> Found | None:
    """A training GPU the post says is mostly idle ('gpu util 一直 40%'): it waits, most often for data."""
    o = s.asked.outcome
    if s.serving or s.kind not in ("util", "slow", "hours", "scaling") or o is None or o.util_pct is None \
            or not UTIL_IDLE < o.util_pct <= UTIL_LOW or _multi_node(s):  # 0 %: nothing runs; several nodes: the
        return None  # network comes first (_rdma)
    return Found(cause_of("util_low", "data_bound", "dataloader_num_workers: 8", util=o.util_pct,
                          idle=round(100 - o.util_pct)), False)


def _data_bound(s: Signs) -> Found | None:
    if s.serving or s.kind not in ("util", "slow", "scaling", "hours"):
        return None
    return Found(cause_of("data_bound", "data_bound", "dataloader_num_workers: 8"), None)


def _host_load(s: Signs) -> Found | None:
    if s.kind != "host_oom":
        return None
    return Found(cause_of("host_load", "host_load", "low_cpu_mem_usage=True"), True)




RULES: tuple[Rule, ...] = (
    _flash_arch, _ref_model, _nccl_hang, _compute_gap, _rdma, _offload, _lora_activations, _fp32_weights, _replicas,
    _zero_same, _host_load, serve.tp_scaling, serve.one_card, serve.ollama_ctx, serve.reservation,
    serve.llamacpp_layers, serve.quant_kernel, serve.multinode_tp, serve.engine_gap, _checkpointing, _qlora, _zero3_gather, _scaling,
    _steps, _util_low, _small_batch, _data_bound, serve.serve_bandwidth)
_OBSERVED: dict[tuple[bool, str], Observed] = {
    (False, "oom"): "train_oom", (False, "error"): "train_oom", (False, "memory"): "train_memory",
    (False, "scaling"): "scaling", (False, "host_oom"): "host_oom", (True, "oom"): "serve_oom",
    (True, "error"): "serve_oom", (True, "memory"): "serve_memory", (True, "host_oom"): "host_oom"}


def general_diagnosis(s: Signs) -> Diagnosis:
    """The causes the stated setup points to, without sizing the model: the deciding cause first; the verdict is
    the first deciding cause's; `ask` is the model, the one thing that would put numbers on them."""
    found: list[Found] = []
    for f in (rule(s) for rule in RULES):
        fix = f.cause.fix.code if f is not None and f.cause.fix is not None else None
        if f is not None and (fix is None or fix not in {x.cause.fix.code for x in found if x.cause.fix}):
            found.append(f)  # one cause per fix: the first (deciding) one says it
    deciding = [f for f in found if f.verdict is not None]
    ordered = deciding + [f for f in found if f.verdict is None]
    observed = _OBSERVED.get((s.serving, s.kind), "serve_slow" if s.serving else "train_slow")
    return Diagnosis(observed_kind=observed, causes=[f.cause for f in ordered],
                     verdict=deciding[0].verdict if deciding else None, ask="model")
