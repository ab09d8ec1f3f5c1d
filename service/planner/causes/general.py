"""Causes that apply whatever the model's size: a diagnosis the engine cannot size (no model named, or one the
catalog does not hold) still names the cause the setup points to. Each cause reads only what the post states: the
asked setup's knobs, hardware and outcome, the setups it contrasts ('SFT fits, DPO OOMs', 'QLoRA 5x slower than
LoRA', 'TGI faster than vLLM') and the card's catalog entry (its compute capability). No figure is made up: a
cause carries the catalog's numbers only (the card's compute capability).

    Signs(kind, serving, asked, others, gpu)   what the post states
    general_diagnosis(signs)                   the causes that apply, the deciding one first; its verdict
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from service.catalog.schema import GpuSpec
from service.frame import Setup
from service.planner.causes.types import Cause, Diagnosis, Fix, Observed

# What was seen, as the general causes group it
GeneralKind = str  # oom | memory | slow | scaling | util | host_oom | error
RL_OBJECTIVES = frozenset({"dpo", "ppo", "grpo", "kto", "orpo", "rlhf", "simpo"})
NODE_GPUS = 8
RDMA_GBPS = 100.0  # a link between nodes below this is not RDMA-class
COMPUTE_GAP = 1.5  # compute this many times the other setup's explains its being that much faster
COMPUTE_SAME = 1.25
MEMORY = ("oom", "memory", "error")  # a run that ran out of memory, or failed (an error is most often memory)
HANG_MEMORY_GB = 4.0  # a multi-GPU run stuck at this little memory has not started computing


@dataclass(frozen=True)
class Signs:
    """What the post states about the run, for the causes that need no size."""

    kind: GeneralKind
    serving: bool
    asked: Setup
    others: tuple[Setup, ...] = ()
    gpu: GpuSpec | None = None
    other_gpus: tuple[GpuSpec | None, ...] = ()  # the card of each contrasted setup, where the catalog has it

    @property
    def engine(self) -> str | None:
        return next((s.knobs.engine for s in (self.asked, *self.others) if s.knobs.engine), None)

    def other_methods(self) -> set[str]:
        return {s.method for s in self.others if s.method}

    def gpus(self) -> int:
        hw = self.asked.hardware
        return hw.gpu_count or (hw.nodes or 1) * (hw.gpus_per_node or 0) or 1


@dataclass(frozen=True)
class _Found:
    cause: Cause
    verdict: bool | None  # the observation is what the setup gives (None: this cause does not decide it)


Rule = Callable[[Signs], _Found | None]


def _cause(code: str, fix: str | None = None, setting: str | None = None, **detail: float) -> Cause:
    return Cause(code=f"g_{code}", fix=Fix(code=f"g_{fix or code}", setting=setting) if fix or setting else None,
                 detail=dict(detail))


# --- training -------------------------------------------------------------------------------------------------
def _ref_model(s: Signs) -> _Found | None:
    if s.kind in MEMORY and s.asked.objective in RL_OBJECTIVES:
        return _Found(_cause("ref_model", "ref_model", "precompute_ref_log_probs: true"), True)
    return None


def _replicas(s: Signs) -> _Found | None:
    k = s.asked.knobs
    sharded = k.zero_stage == 3 or k.strategy == "fsdp"
    if s.kind in MEMORY and not s.serving and s.gpus() > 1 and not sharded and not _hang(s):
        return _Found(_cause("replicas", "replicas", "zero_stage: 3", ranks=float(s.gpus())), True)
    return None


def _lora_activations(s: Signs) -> _Found | None:
    lora = s.asked.method in ("lora", "qlora") or bool({"lora", "qlora"} & s.other_methods())
    full = s.asked.method == "full" or "full" in s.other_methods()
    if s.kind in (*MEMORY, "hours", "slow") and lora and full:
        verdict = False if s.kind in MEMORY else None
        return _Found(_cause("lora_activations", "checkpointing", "gradient_checkpointing: true"), verdict)
    return None


def _fp32_weights(s: Signs) -> _Found | None:
    """LoRA no lighter than full fine-tuning, no precision stated: the frozen weights loaded in fp32 (4 bytes a
    parameter, twice bf16) weigh what LoRA saved."""
    lora = s.asked.method in ("lora", "qlora") or bool({"lora", "qlora"} & s.other_methods())
    full = s.asked.method == "full" or "full" in s.other_methods()
    stated = any(x.knobs.precision or x.knobs.quant_bits for x in (s.asked, *s.others))
    if s.kind in MEMORY and lora and full and not stated:
        return _Found(_cause("fp32_weights", "half_weights", "torch_dtype=torch.bfloat16"), None)
    return None


def _hang(s: Signs) -> bool:
    """Several cards stuck (an error, or memory barely used at full utilisation) where one card trained."""
    o = s.asked.outcome
    one_worked = any(x.outcome is not None and x.outcome.status == "worked" and (x.hardware.gpu_count or 0) == 1
                     for x in s.others)
    idle = o is not None and o.memory_gb is not None and o.memory_gb <= HANG_MEMORY_GB
    return not s.serving and s.gpus() > 1 and one_worked and s.kind in ("error", "slow", "util") and idle


def _nccl_hang(s: Signs) -> _Found | None:
    if _hang(s):
        return _Found(_cause("nccl_hang", "nccl_hang", "NCCL_P2P_DISABLE=1"), False)
    return None


def _zero_same(s: Signs) -> _Found | None:
    stages = {x.knobs.zero_stage for x in (s.asked, *s.others) if x.knobs.zero_stage is not None}
    if s.kind in MEMORY and not s.serving and len(stages) > 1:
        return _Found(_cause("zero_same", "checkpointing", "gradient_checkpointing: true"), None)
    return None


def _zero3_gather(s: Signs) -> _Found | None:
    k = s.asked.knobs
    against_fsdp = k.framework == "deepspeed" and any(x.knobs.strategy == "fsdp" for x in s.others)
    if s.kind in ("slow", "util", "hours") and not s.serving and (k.zero_stage == 3 or against_fsdp):
        return _Found(_cause("zero3_gather", "zero3_gather", "stage3_param_persistence_threshold"), None)
    return None


def _small_batch(s: Signs) -> _Found | None:
    if s.kind in ("slow", "hours") and not s.serving and not s.asked.knobs.offload:
        return _Found(_cause("small_batch", "small_batch", "packing: true"), None)
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


def _compute_gap(s: Signs) -> _Found | None:
    if s.kind not in ("hours", "slow", "scaling", "util"):
        return None
    found = _compute_ratio(s)
    if found is None:
        return None
    ratio, other, g = found
    n_other = float(other.hardware.gpu_count or s.gpus())
    if ratio >= COMPUTE_GAP:
        return _Found(_cause("compute_gap", ratio=round(ratio, 1), other_count=n_other, count=float(s.gpus())), True)
    if ratio >= 1 / COMPUTE_SAME and s.gpu is not None and g.dense_16bit_tflops == s.gpu.dense_16bit_tflops:
        return _Found(_cause("same_compute", "same_compute"), True)
    if ratio <= 1 / COMPUTE_GAP:
        return _Found(_cause("compute_unused", "data_bound", ratio=round(1 / ratio, 1)), False)
    return None


def _flash_arch(s: Signs) -> _Found | None:
    g = s.gpu
    if s.asked.knobs.attention == "flash" and g is not None and not g.supports_flash_attn2:
        cc = float(g.compute_capability) if g.compute_capability else 0.0
        return _Found(_cause("flash_arch", "flash_arch", "attn_implementation: sdpa", cc=cc), True)
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


def _rdma(s: Signs) -> _Found | None:
    if s.serving or s.kind not in ("slow", "scaling", "util") or not _multi_node(s):
        return None
    rdma = _rdma_stated(s)
    if rdma is False:
        return _Found(_cause("no_rdma", "no_rdma", "NCCL_IB_HCA"), True)
    if rdma is True:
        return _Found(_cause("rdma_unused", "rdma_unused", "NCCL_DEBUG=INFO"), False)
    return _Found(_cause("no_rdma", "no_rdma", "NCCL_DEBUG=INFO"), None)


def _offload(s: Signs) -> _Found | None:
    if s.kind in ("slow", "util", "scaling") and s.asked.knobs.offload:
        return _Found(_cause("offload", "offload", "offload_optimizer: none"), True)
    return None


def _checkpointing(s: Signs) -> _Found | None:
    if s.kind in ("slow", "util") and s.asked.knobs.checkpointing and not s.serving:
        return _Found(_cause("checkpointing_slow", "checkpointing_off", "gradient_checkpointing: false"), True)
    return None


def _qlora(s: Signs) -> _Found | None:
    if s.kind in ("slow", "util") and s.asked.method == "qlora" and not s.serving:
        return _Found(_cause("qlora_dequant", "qlora_dequant"), None)
    return None


def _scaling(s: Signs) -> _Found | None:
    if s.serving or s.kind != "scaling":
        return None
    pcie = s.asked.hardware.interconnect == "pcie"
    return _Found(_cause("grad_sync", "grad_sync", "gradient_accumulation_steps"), True if pcie else None)


def _steps(s: Signs) -> _Found | None:
    if s.serving or s.kind != "scaling":
        return None
    return _Found(_cause("global_batch", "global_batch"), None)


def _data_bound(s: Signs) -> _Found | None:
    if s.serving or s.kind not in ("util", "slow", "scaling", "hours"):
        return None
    return _Found(_cause("data_bound", "data_bound", "dataloader_num_workers: 8"), None)


def _host_load(s: Signs) -> _Found | None:
    if s.kind != "host_oom":
        return None
    return _Found(_cause("host_load", "host_load", "low_cpu_mem_usage=True"), True)


# --- serving --------------------------------------------------------------------------------------------------
def _tp_scaling(s: Signs) -> _Found | None:
    tps = {x.knobs.tp for x in (s.asked, *s.others) if x.knobs.tp}
    if s.serving and (s.kind == "scaling" or (s.kind == "slow" and len(tps) > 1)):
        return _Found(_cause("tp_scaling", "replicas_serve", "--tensor-parallel-size 1"), True)
    return None


def _reservation(s: Signs) -> _Found | None:
    eng = s.engine or "vllm"
    o = s.asked.outcome
    card = s.gpu.memory_gib if s.gpu is not None else s.asked.hardware.gpu_memory_gb
    seen = o.memory_gb if o is not None else None
    low = seen is not None and card is not None and seen < 0.5 * card
    if not s.serving or s.kind not in MEMORY:
        return None
    if eng == "ollama" and s.kind == "memory" and low:
        return _Found(_cause("ollama_fit", "ollama_fit", "OLLAMA_NUM_CTX"), True)
    if eng == "lmdeploy":
        return _Found(_cause("lmdeploy_cache", "lmdeploy_cache", "--cache-max-entry-count 0.5"), True)
    if s.kind == "memory" and not low and eng in ("vllm", "sglang", "xinference"):
        flag = "--mem-fraction-static 0.5" if eng == "sglang" else "--gpu-memory-utilization 0.5"
        return _Found(_cause("reservation", "reservation", flag), True)
    return None


QUANTIZED = frozenset({"int4", "int8", "awq", "gptq"})
SPLITTING_ENGINES = frozenset({"vllm", "sglang", "lmdeploy", "trtllm", "tgi", "mindie"})


def _quant_kernel(s: Signs) -> _Found | None:
    """Quantized weights slow: they are fast only with a fused kernel (Marlin, the AutoGPTQ CUDA extension)."""
    engines = {x.knobs.engine for x in (s.asked, *s.others) if x.knobs.engine}
    plain = s.asked.knobs.engine in (None, "hf", "transformers", "xinference") or len(engines) > 1
    if s.serving and s.kind == "slow" and (s.asked.knobs.weights or "") in QUANTIZED and plain:
        return _Found(_cause("quant_kernel", "quant_kernel", "--quantization awq_marlin"), None)
    return None


def _one_card(s: Signs) -> _Found | None:
    """Several cards, no tensor parallelism: the model loads on one card, or device_map fills the first."""
    k = s.asked.knobs
    if (s.serving and s.kind in MEMORY and s.gpus() > 1 and not k.tp and not k.pp
            and k.engine not in ("ollama", "llamacpp")):
        return _Found(_cause("one_card", "one_card", f"--tensor-parallel-size {s.gpus()}", cards=float(s.gpus())),
                      False)
    return None


def _ollama_ctx(s: Signs) -> _Found | None:
    ctx = s.asked.knobs.max_model_len
    if s.serving and s.engine == "ollama" and s.kind in ("slow", "oom", "util") and ctx:
        return _Found(_cause("ollama_ctx", "ollama_ctx", "num_ctx", ctx=float(ctx)), True)
    return None


def _llamacpp_layers(s: Signs) -> _Found | None:
    if s.serving and s.engine == "llamacpp" and s.kind in ("slow", "util", "oom"):
        return _Found(_cause("llamacpp_layers", "llamacpp_layers", "-ngl 99"), None)
    return None


def _engine_gap(s: Signs) -> _Found | None:
    engines = {x.knobs.engine for x in (s.asked, *s.others) if x.knobs.engine}
    if s.serving and s.kind == "slow" and len(engines) > 1:
        return _Found(_cause("engine_gap"), False)
    return None


def _serve_bandwidth(s: Signs) -> _Found | None:
    if s.serving and s.kind == "slow":
        return _Found(_cause("decode_bound", "batching"), None)
    return None


# The order is the ranking: a cause the stated setup decides comes before one that only may apply.
RULES: tuple[Rule, ...] = (_flash_arch, _ref_model, _nccl_hang, _compute_gap, _rdma, _offload, _lora_activations, _fp32_weights,
                           _replicas, _zero_same, _host_load, _tp_scaling, _one_card, _ollama_ctx, _reservation,
                           _llamacpp_layers, _quant_kernel, _engine_gap, _checkpointing,
                           _qlora, _zero3_gather, _scaling, _steps, _small_batch, _data_bound, _serve_bandwidth)
_OBSERVED: dict[tuple[bool, str], Observed] = {
    (False, "oom"): "train_oom", (False, "error"): "train_oom", (False, "memory"): "train_memory",
    (False, "scaling"): "scaling", (False, "host_oom"): "host_oom", (True, "oom"): "serve_oom",
    (True, "error"): "serve_oom", (True, "memory"): "serve_memory", (True, "host_oom"): "host_oom"}


def general_diagnosis(s: Signs) -> Diagnosis:
    """The causes the stated setup points to, without sizing the model: the deciding cause first; the verdict is
    the first deciding cause's; `ask` is the model, the one thing that would put numbers on them."""
    found: list[_Found] = []
    for f in (rule(s) for rule in RULES):
        fix = f.cause.fix.code if f is not None and f.cause.fix is not None else None
        if f is not None and (fix is None or fix not in {x.cause.fix.code for x in found if x.cause.fix}):
            found.append(f)  # one cause per fix: the first (deciding) one says it
    deciding = [f for f in found if f.verdict is not None]
    ordered = deciding + [f for f in found if f.verdict is None]
    observed = _OBSERVED.get((s.serving, s.kind), "serve_slow" if s.serving else "train_slow")
    return Diagnosis(observed_kind=observed, causes=[f.cause for f in ordered],
                     verdict=deciding[0].verdict if deciding else None, ask="model")
