"""GPU memory per device for training, every term reported, allocated and reserved apart.

Sources (shared/reference/sizing.md): bytes per parameter of every state by precision, optimizer and framework in
service/sizing/precision.py (ZeRO paper: 2 B weights + 2 B grads + 4 B master + 8 B Adam = 16 B/param; pure bf16
8 B/param; DeepSpeed's bf16 master 10 B/param); ZeRO-1/2/3 shard optimizer / +grads / +weights, over the shard
group (all data-parallel GPUs, or a node under hybrid sharding); QLoRA NF4 + double quantisation 4.127 bits/param
with embeddings, head and norms kept 16-bit (A5), fp32 after PEFT's prepare_model_for_kbit_training. Activations
in service/sizing/activations.py; buffers, allocator reserve and runtime in service/sizing/buffers.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.catalog.schema import ModelSpec
from service.sizing import buffers
from service.sizing.activations import FUSED_GATE_UP, FUSED_QKV, activation_gib, logits_bytes
from service.sizing.expected_error import expected_error
from service.sizing.params import ParamCounts, count_params, lora_params
from service.sizing.precision import adapter_bytes, pure, state_bytes, step_upcast_bytes
from service.sizing.types import GIB, MemoryBreakdown, Offload, TrainSetup

NF4_BYTES = 4.127 / 8  # NF4 + double quantisation (A5)
INT8_BYTES = 1.0 + 0.06  # LLM.int8 weights + ~6 % quantisation overhead (gpu_poor, A5)
UNET_LORA_FRACTION = 0.01  # estimate: rank 8-32 LoRA on a diffusion UNet's attention layers, ~1 % of its weights
DS_BUFFER_FACTOR = 1.5  # DeepSpeed estimator's additional_buffer_factor for CPU RAM (A3)
LORA_TARGET_NAMES = {
    "qv": frozenset({"q_proj", "v_proj", "q_b_proj", "kv_b_proj", "qkv_proj"}),
    "attn": frozenset({"q_proj", "k_proj", "v_proj", "o_proj", "q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "qkv_proj",
                       "kv_b_proj"}),
}
# Re-exported for callers that size overheads
CUDA_CONTEXT_GIB = buffers.CUDA_CONTEXT_GIB
NCCL_GIB = buffers.NCCL_GIB


def _frozen_weight_bytes(c: ParamCounts, setup: TrainSetup) -> float:
    fp32 = setup.precision == "fp32" or setup.fp32_weights and setup.method in ("lora", "qlora")
    if setup.method != "qlora":
        return c.total * (4.0 if fp32 else 2.0)
    quant = NF4_BYTES if (setup.quant_bits or 4) == 4 else INT8_BYTES
    rest_b = 4.0 if setup.kbit_upcast or fp32 else 2.0  # embeddings, lm_head, norms: fp32 after kbit preparation
    return c.linear * quant + (c.total - c.linear) * rest_b


def _quant_bytes(setup: TrainSetup) -> float | None:
    """Bytes per quantised linear parameter a QLoRA base stores and ZeRO-3 / FSDP gathers (its 4-bit storage,
    bnb_4bit_quant_storage); None for a 16-bit base."""
    if setup.method != "qlora":
        return None
    return NF4_BYTES if (setup.quant_bits or 4) == 4 else INT8_BYTES


def extra_module_params(c: ParamCounts, setup: TrainSetup) -> float:
    """Parameters of the modules trained in full beside LoRA (modules_to_save / additional_target)."""
    out = 0.0
    if "embed_tokens" in setup.lora_extra:
        out += c.embedding
    if "lm_head" in setup.lora_extra:
        out += c.lm_head or c.embedding  # tied: the shared matrix
    return out


def trainable_params(m: ModelSpec, c: ParamCounts, setup: TrainSetup) -> float:
    if setup.method in ("full", "pretrain"):
        return c.total
    if setup.method == "freeze":
        layers = max(1, m.num_layers or 1)
        per_layer = c.linear / layers
        return per_layer * min(setup.freeze_trainable_layers, layers)
    if m.kind in ("cnn", "diffusion"):
        return c.total * UNET_LORA_FRACTION  # no per-layer shapes in the catalog for these
    targets = None if setup.lora_targets == "all_linear" else LORA_TARGET_NAMES[setup.lora_targets]
    return lora_params(c, setup.lora_rank, targets) - _fusion_saving(m, c, setup.lora_rank, targets) \
        + extra_module_params(c, setup)


def _fusion_saving(m: ModelSpec, c: ParamCounts, rank: int, targets: frozenset[str] | None) -> float:
    """Adapter parameters a fused projection saves: Phi-3's qkv_proj, Phi-3's and GLM-4's gate_up_proj are one
    linear each (transformers models/phi3, glm), so one adapter r x (d_in + the outputs' sum) replaces one per
    part (the traces count them so: evals/traces phi3, glm4)."""
    saving = 0.0
    for fused, group in ((FUSED_QKV, ("q_proj", "k_proj", "v_proj")), (FUSED_GATE_UP, ("gate_proj", "up_proj"))):
        if m.family not in fused:
            continue
        parts = [x for x in c.linears if x.name in group]
        hit = [x for x in parts if targets is None or x.name in targets]  # the parts lora_params counted
        if not hit:
            continue
        separate = sum(rank * (x.d_in + x.d_out) * x.count for x in hit)
        one = rank * (parts[0].d_in + sum(x.d_out for x in parts)) * parts[0].count
        saving += separate - one
    return saving


def dequant_buffer_bytes(m: ModelSpec, c: ParamCounts, setup: TrainSetup) -> float:
    """QLoRA: bitsandbytes' MatMul4Bit dequantises the weight to bf16 for its one matmul, forward and backward
    (the traces' stand-in allocates it: evals/traces). It lives while a layer computes, never at the loss, where
    the full-vocabulary logits peak: it counts only where it exceeds them."""
    if setup.method != "qlora":
        return 0.0
    largest_quantised = max((x.d_in * x.d_out for x in c.linears), default=c.largest_layer)
    return max(0.0, 2 * largest_quantised * 2 - logits_bytes(m, setup))


def _offload_host_gib(c: ParamCounts, setup: TrainSetup, trainable: float) -> float:
    """DeepSpeed CPU RAM x 1.5 buffer (A3): ZeRO-3 with zero.Init params x 16 (optimizer) or 18 (all), the job's
    total (the planner divides it over nodes); ZeRO-2 (one node here) params x max(4 x GPUs, 16), since every
    process first builds the fp32 model on the CPU."""
    factor = 18 if setup.offload == "all" else 16
    host_bytes = trainable * factor if setup.zero_stage >= 3 else max(4 * max(1, setup.n_gpus) * c.total,
                                                                      factor * trainable)
    return host_bytes * DS_BUFFER_FACTOR / GIB


def estimate_memory(m: ModelSpec, setup: TrainSetup) -> MemoryBreakdown:
    """Per-GPU memory for one training setup (see the module docstrings for every constant's source)."""
    c = count_params(m)
    n = setup.shard_n
    z = setup.zero_stage
    notes: list[str] = []
    trainable = trainable_params(m, c, setup)
    adapters = setup.method in ("lora", "qlora")
    sb = adapter_bytes(setup) if adapters else state_bytes(setup)
    if adapters:
        notes.append(f"LoRA rank {setup.lora_rank} on {setup.lora_targets.replace('_', '-')} layers"
                     + (f" + {', '.join(setup.lora_extra)} trained in full" if setup.lora_extra else "")
                     + f": {trainable / 1e6:.1f}M trainable")
    frozen = _frozen_weight_bytes(c, setup)
    if adapters:
        weights = frozen + trainable * sb.weight
    elif setup.method == "freeze":
        weights = frozen + trainable * (sb.weight - 2.0)  # the trained layers' extra bytes over their bf16 copy
    else:
        weights = trainable * sb.weight
    grads = 0.0 if setup.optimizer_in_bwd else trainable * sb.grad
    optim = trainable * sb.optim
    host = 0.0
    deepspeed = setup.sharding == "deepspeed"
    if z >= 1 and deepspeed:
        # ZeRO-1/2 upcast the whole gradient partition to the master's dtype at the step (fp32, memory.rst, A3);
        # ZeRO-3 keeps its partition 16-bit and upcasts one sub-group at a time (a step transient, below)
        upcast = 0.0 if z >= 3 or pure(setup) else 4.0
        optim = trainable * (state_bytes(setup).optim + upcast) / n  # adapters too get DeepSpeed's master
        if z == 2 and not adapters:
            grads = 0.0  # ZeRO-2 reduces the 16-bit gradients bucket by bucket (buffers hold the bucket)
    elif z >= 2:  # FSDP shards the gradients and optimizer states
        optim /= n
        grads /= n
    if z >= 3:
        grads = grads / n if deepspeed else grads
        weights /= n
        notes.append(("ZeRO-3" if deepspeed else "FSDP FULL_SHARD") + " gathers parameters unsharded while "
                     "they compute")
    if setup.offload in ("optimizer", "all"):
        host = _offload_host_gib(c, setup, trainable)
        optim = grads = 0.0
        if setup.offload == "all":
            weights = 0.0
            notes.append("ZeRO-3 offload of parameters and optimizer to CPU RAM: slow, needs fast host memory")
        elif not deepspeed:
            # FSDP has one CPU offload (CPUOffload(offload_params=True), FSDP2's CPUOffloadPolicy): the sharded
            # parameters, their gradients and the optimizer step all live on the CPU; layers are still gathered
            weights = 0.0
            notes.append("FSDP CPU offload: sharded parameters, gradients and optimizer in CPU RAM")
        else:
            notes.append("ZeRO offload of the optimizer to CPU RAM")

    if setup.frozen_copies:
        copies = setup.frozen_copies * c.total * 2.0  # bf16 reference / reward / value models, forward only
        weights += copies / n if z >= 3 else copies
        notes.append(f"{setup.frozen_copies} frozen model cop{'y' if setup.frozen_copies == 1 else 'ies'} "
                     "(reference / reward) held beside the policy")
    gathered, buf = buffers.sharding_buffers_bytes(m, c, setup, trainable, 4.0 if setup.precision == "fp32" else 2.0,
                                                   _quant_bytes(setup))
    if z >= 3 and setup.offload == "all" and deepspeed:
        buf += 4 * c.largest_layer  # DeepSpeed: the gathered 16-bit layer and its gradient
    buf += buffers.autocast_copy_bytes(m, c, setup)
    buf += dequant_buffer_bytes(m, c, setup)
    # The optimizer step runs after the backward has freed the activations and released the gathered parameters:
    # its temporaries count only where they exceed the backward's transients. torch.optim.AdamW's foreach path
    # (_multi_tensor_adamw) builds _foreach_sqrt(exp_avg_sqs), one temporary as large as the second moments it
    # holds; DeepSpeed ZeRO-3 upcasts one sub-group's gradient (precision.step_upcast_bytes).
    step_tmp = 0.0
    if (setup.optimizer == "adamw" and not setup.fused_optimizer and not setup.optimizer_in_bwd and optim
            and not (deepspeed and z >= 1)):
        moment_b = 2.0 if setup.precision == "pure_bf16" and (adapters or pure(setup)) else 4.0
        step_tmp = moment_b * trainable / (n if z >= 2 else 1)
    if setup.offload == "none" and not adapters:
        step_tmp = max(step_tmp, step_upcast_bytes(setup, trainable))
    acts_bytes = activation_gib(m, setup) * GIB
    backward = acts_bytes + buf + gathered
    buf += max(0.0, step_tmp - backward)
    # DeepSpeed ZeRO-3's step upcasts a sub-group into one flat fp32 tensor (up to 4 GB) after the backward: none
    # of the backward's freed blocks holds it, so the caching allocator maps a new segment and keeps those cached
    # (reserved, not allocated) unless segments are expandable
    late_segment = 0.0
    if step_tmp and deepspeed and z >= 3 and not setup.expandable_segments:
        late_segment = min(step_upcast_bytes(setup, trainable), backward)
    paged = 0.0
    if setup.optimizer == "paged_adamw_8bit" and optim:
        # bitsandbytes paged optimizers allocate their states with cudaMallocManaged: outside PyTorch's allocator,
        # and the driver pages them to CPU RAM when the GPU runs short (QLoRA paper, paged optimizers)
        paged, optim = optim, 0.0
        notes.append(f"paged optimizer: {paged / GIB:.1f} GiB of states in unified memory, paged to CPU RAM "
                     "when the GPU runs short")
    acts = acts_bytes / GIB
    buf += gathered
    buffers_gib = buf / GIB
    persistent = (weights + grads + optim) / GIB
    return MemoryBreakdown(
        weights_gib=weights / GIB,
        gradients_gib=grads / GIB,
        optimizer_gib=optim / GIB,
        activations_gib=acts,
        trainable_params=trainable,
        buffers_gib=buffers_gib,
        allocator_gib=buffers.allocator_reserve_gib(persistent + gathered / GIB, acts + buffers_gib - gathered / GIB)
        + late_segment / GIB,
        runtime_gib=buffers.runtime_gib(setup),
        host_ram_gib=host + paged / GIB,
        paged_gib=paged / GIB,
        notes=tuple(notes),
        expected_error=expected_error("memory", setup, m),
    )


@dataclass(frozen=True)
class DeepSpeedStates:
    """DeepSpeed's estimate of model-state memory (params + grads + Adam states, no activations), GiB."""

    gpu_gib: float  # per GPU
    cpu_gib: float  # per node


def deepspeed_model_states_gib(
    params: float,
    largest_layer: float,
    gpus_per_node: int,
    stage: int,
    offload: Offload = "none",
    nodes: int = 1,
    zero_init: bool = True,
) -> DeepSpeedStates:
    """The formulas of DeepSpeed's `estimate_zero{2,3}_model_states_mem_needs` (docs memory.rst, sizing.md A3).

    DeepSpeed's convention differs from the ZeRO paper's that `estimate_memory` follows: it keeps the fp16
    params and fp16 grads whole under ZeRO-2 (4 B/param) and counts fp32 grads (16 B/param sharded; 18 with the
    fp16 params under ZeRO-3), where the paper counts 2 + 2 + 12 = 16 B/param in all.
    """
    total_gpus = gpus_per_node * nodes
    if stage == 2:
        if offload == "all":
            raise ValueError("ZeRO-2 cannot offload parameters; use stage 3")
        if offload == "optimizer":
            gpu = 2 * params
            cpu = params * max(4 * gpus_per_node, 16) * DS_BUFFER_FACTOR
        else:
            gpu = 4 * params + int(16 * params / total_gpus)
            cpu = params * 4 * gpus_per_node * DS_BUFFER_FACTOR  # only while the model is first built
    elif stage == 3:
        gpus_factor = 1 / nodes
        gathered = 4 * largest_layer  # fp16 params gathered + fp16 grads of the largest layer
        if offload == "all":
            gpu = gathered
            cpu = params * (18 * gpus_factor if zero_init else max(4 * gpus_per_node, 18 * gpus_factor))
        elif offload == "optimizer":
            gpu = gathered + int(2 * params / total_gpus)
            cpu = params * (16 * gpus_factor if zero_init else max(4 * gpus_per_node, 16 * gpus_factor))
        else:
            gpu = gathered + int(18 * params / total_gpus)
            cpu = (largest_layer if zero_init else params) * 4 * gpus_per_node
        cpu *= DS_BUFFER_FACTOR
    else:
        raise ValueError(f"DeepSpeed's estimator covers ZeRO stages 2 and 3, not {stage}")
    return DeepSpeedStates(gpu / GIB, cpu / GIB)
