"""Transient buffers beside the model states and activations, the caching allocator's reserve and the runtime.

Sources (each constant names its own): DeepSpeed's ZeRO config defaults (deepspeed/runtime/zero/config.py,
docs/_pages/config-json.md), DeepSpeed ZeRO-3's gradient buffers (deepspeed/runtime/zero/stage3.py), Hugging Face's
"auto" DeepSpeed values (transformers integrations/deepspeed.py: reduce_bucket_size = hidden^2), PyTorch FSDP's
all-gather rate limiter (torch/distributed/fsdp: limit_all_gathers=True keeps at most two unsharded units, the one
computing and the one prefetched; the root unit, embeddings and head, stays unsharded between its forward and
backward), torch.autocast's weight-cast cache, and PyTorch's CUDA caching allocator.
"""

from __future__ import annotations

from service.catalog.schema import ModelSpec
from service.sizing.comm import NCCL_GIB_UNKNOWN, nccl_gib
from service.sizing.params import ParamCounts
from service.sizing.types import GIB, TrainSetup

# DeepSpeed ZeRO-3: "the maximum number of parameters resident per GPU before releasing", 1e9 (config-json.md;
# LLaMA-Factory's examples/deepspeed/ds_z3_config.json sets the same). With stage3_max_reuse_distance 1e9 the
# parameters used again soon (the last layers and the head, needed first by the backward) stay gathered up to it.
STAGE3_MAX_LIVE_PARAMS = 1e9
# DeepSpeed ZeRO-1/2 reduce_bucket_size and allgather_bucket_size default 5e8 elements (config-json.md), as
# LLaMA-Factory's ds_z2_config.json sets them: one 16-bit gradient bucket during the backward.
ZERO2_BUCKET_ELEMS = 5e8
CUDA_CONTEXT_GIB = 0.9  # torch 2.1 eager context on A100 measured 0.92 GB (stas00, sizing.md B8)
# NCCL communicator buffers, outside PyTorch's allocator: by link (service/sizing/comm.py NCCL_GIB); unknown link:
# torch.distributed init on NVLink nodes, "expect ~1-2GB" (stas00, B8).
NCCL_GIB = NCCL_GIB_UNKNOWN
# Caching allocator: freed blocks stay reserved and a later, differently sized request may not fit them. The
# persistent model states are allocated once (little waste); the transient tensors (activations, logits, gathered
# parameters, buckets) are freed and re-requested every step in varying sizes. 5-10 % of what is allocated is the
# usual waste (sizing.md E1); the transient share is where it comes from.
FRAG_PERSISTENT = 0.02  # block rounding (2 MiB large blocks, 20 MiB segments for 1-10 MiB requests)
FRAG_TRANSIENT = 0.15  # free-but-unusable cached blocks among the per-step tensors


def zero3_gather_params(c: ParamCounts, layer_params: float, setup: TrainSetup) -> float:
    """Parameters held unsharded at once under ZeRO-3 / FSDP FULL_SHARD (elements)."""
    if setup.sharding == "fsdp" and not setup.fsdp_wrapped:
        return c.total  # one unit: the whole model unsharded while it computes
    if setup.sharding == "fsdp":
        # FSDP1 wrapped per decoder layer (accelerate's TRANSFORMER_BASED_WRAP): two layers (computing +
        # prefetched), and the root unit (embedding, head), which stays unsharded from its forward to its backward
        return min(c.total, 2 * layer_params + c.embedding + c.lm_head)
    if setup.sharding == "fsdp2":
        # FSDP2 with the embedding and head sharded as units of their own (torchtune custom_sharded_layers,
        # torchtitan): the two largest units in flight
        return min(c.total, 2 * max(layer_params, c.embedding, c.lm_head))
    return min(c.total, max(STAGE3_MAX_LIVE_PARAMS, c.largest_layer))


def gathered_bytes(m: ModelSpec, c: ParamCounts, setup: TrainSetup, wide: float, quant: float | None) -> float:
    """Bytes of the parameters held unsharded at once under ZeRO-3 / FSDP FULL_SHARD, each unit at its own
    storage: a QLoRA layer gathers its 4-bit linears (bnb_4bit_quant_storage) and 16-bit norms, the embedding and
    head gather at 16 bits (`wide`)."""
    layers = max(1, m.num_layers or 1)
    layer_params = (c.total - c.embedding - c.lm_head) / layers
    if quant is None or setup.sharding == "deepspeed":
        avg = wide if quant is None else (c.linear * quant + (c.total - c.linear) * wide) / max(1.0, c.total)
        return avg * zero3_gather_params(c, layer_params, setup)
    layer_linear = c.linear / layers
    layer = layer_linear * quant + (layer_params - layer_linear) * wide
    whole = c.linear * quant + (c.total - c.linear) * wide
    if setup.sharding == "fsdp" and not setup.fsdp_wrapped:
        return whole
    if setup.sharding == "fsdp":
        return min(whole, 2 * layer + (c.embedding + c.lm_head) * wide)
    return min(whole, 2 * max(layer, c.embedding * wide, c.lm_head * wide))


def sharding_buffers_bytes(m: ModelSpec, c: ParamCounts, setup: TrainSetup, trainable: float, wide: float,
                           quant: float | None = None) -> tuple[float, float]:
    """(gathered parameters, unsharded gradients and reduction buckets) of one GPU, bytes. The gathers are the
    same units every layer and step, so the caching allocator hands the same blocks back (allocator_reserve_gib
    counts them as it counts the model states); the rest varies."""
    n, z = setup.shard_n, setup.zero_stage
    if n == 1 or z == 0:
        return 0.0, 0.0
    layers = max(1, m.num_layers or 1)
    layer_params = (c.total - c.embedding - c.lm_head) / layers
    h = m.hidden_size or 0
    trains_base = trainable >= 0.5 * c.total
    gathered = out = 0.0
    if z >= 3 and (setup.offload != "all" or setup.sharding != "deepspeed"):  # FSDP gathers to the GPU offloaded
        gathered = gathered_bytes(m, c, setup, wide, quant)
        if trains_base:  # the unit's unsharded 16-bit gradients before the reduce-scatter
            unit = c.largest_layer if setup.sharding == "deepspeed" else max(layer_params, c.lm_head)
            if setup.sharding == "fsdp" and not setup.fsdp_wrapped:
                unit = c.total
            out += 2 * unit
            out += 2 * h * h  # ZeRO-3 reduce bucket: Hugging Face's "auto" reduce_bucket_size = hidden^2
    elif z == 2 and trains_base and setup.sharding == "deepspeed":
        out += 2 * min(ZERO2_BUCKET_ELEMS, trainable)  # contiguous_gradients bucket
    return gathered, out


def autocast_copy_bytes(m: ModelSpec, c: ParamCounts, setup: TrainSetup) -> float:
    """bf16 casts of fp32 weights that torch.autocast makes and the backward keeps: the whole model's linears
    without checkpointing, one layer's and the head's with it (the rest are recomputed)."""
    if not setup.fp32_weights or setup.precision not in ("bf16", "fp16", "fp8"):
        return 0.0
    if setup.method not in ("full", "pretrain"):
        return 0.0
    n = setup.shard_n if setup.zero_stage >= 3 else 1
    linear = c.linear + c.lm_head
    if setup.grad_ckpt:
        linear = c.linear / max(1, m.num_layers or 1) + c.lm_head
    return 2.0 * linear / n


def allocator_reserve_gib(persistent_gib: float, transient_gib: float) -> float:
    return FRAG_PERSISTENT * persistent_gib + FRAG_TRANSIENT * transient_gib


def runtime_gib(setup: TrainSetup) -> float:
    return CUDA_CONTEXT_GIB + nccl_gib(setup)


def gib(x: float) -> float:
    return x / GIB
