"""Causes of slow training, and of more GPUs or nodes being no faster: each a pure function of the `TrainCase`, the
slowdown it explains as a ratio ('x': times slower than without it) from the throughput engine
(service/sizing/throughput.py, comm.py), and the fix with the tokens/s after it.

    offload          ZeRO / FSDP CPU offload: the optimizer step (and parameters) cross PCIe every step
    zero3_link       ZeRO-3 / FSDP gathering every layer's weights over a slow link between nodes (TCP, 10 GbE)
    allreduce_link   gradients all-reduced over PCIe without P2P (GeForce), PCIe or TCP: more cards, little faster
    moe_loop         transformers' MoE looping over its experts in Python, one sync per expert
    checkpointing    gradient checkpointing recomputes every layer's forward (+1/3 of the work)
    eager_time       eager attention writing and reading the seq^2 scores
    qlora_dequant    QLoRA dequantising every 4-bit weight in each pass
    no_bf16          bf16 asked on a card without bf16 tensor cores (V100, T4): emulated
    padding          sequences padded to the cutoff, far beyond the mean sample
    data_wait        the GPU idle (its utilisation) waiting for data
"""

from __future__ import annotations

from service.planner.causes.cases import TrainCase
from service.planner.causes.types import Cause, Fix, Quantity
from service.sizing.activations import EAGER_BACKWARD_SCORE_BYTES, EAGER_SCORE_BYTES

MIN_RATIO = 1.15  # a cause that slows the run by less than this is not worth naming
TCP_GBPS_ASSUMED = 25.0  # a VPC network between nodes when the post names none (service/sizing/comm.py)
LOW_UTIL_PCT = 70.0
PADDING_SHARE = 0.6  # mean sample under this share of the cutoff: padded compute dominates
SCORE_PASSES = 2  # eager scores written then read, forward and backward
BW_SHARE = 0.7  # of the datasheet bandwidth the score traffic reaches


def _x(ratio: float) -> Quantity:
    return Quantity.of(ratio, "x")


def _tps(rate: float) -> Quantity:
    return Quantity.of(rate, "tok/s", 0)


def offload(case: TrainCase) -> Cause:
    s = case.setup
    if s.offload == "none":
        return Cause.no("offload")
    slow, fast = case.rate(), case.rate(offload="none")
    if not slow or fast / slow < MIN_RATIO:
        return Cause.no("offload")
    need = case.memory(offload="none").per_gpu_gib
    if need <= case.capacity_gib:
        fix = Fix(code="no_offload", setting="offload_optimizer: none", fixed=_tps(fast), fits=True)
    else:
        more = next((n for n in (2, 4, 8, 16, 32) if n * case.gpus <= 256 and case.memory(
            offload="none", zero_stage=3, n_gpus=n * case.gpus).per_gpu_gib <= case.capacity_gib), None)
        fix = Fix(code="more_gpus_no_offload", setting=f"{(more or 2) * case.gpus} GPUs, ZeRO-3, no offload",
                  fixed=_tps(case.rate(gpus=(more or 2) * case.gpus, offload="none", zero_stage=3)),
                  fits=more is not None)
    return Cause(code="offload", explains=_x(fast / slow), fix=fix,
                 detail={"with_tps": round(slow), "without_tps": round(fast),
                         "all": 1.0 if s.offload == "all" else 0.0})


def _slow_link(case: TrainCase) -> tuple[bool, float, bool]:
    """(the nodes talk over a slow link, its Gb/s, stated)."""
    hw = case.hardware
    if hw.interconnect == "rdma":
        return False, 0.0, True
    if hw.interconnect == "ethernet" or (hw.network_gbps is not None and hw.network_gbps <= 100):
        return True, hw.network_gbps or TCP_GBPS_ASSUMED, True
    return case.nodes > 1, TCP_GBPS_ASSUMED, False


def zero3_link(case: TrainCase) -> Cause:
    s = case.setup
    slow_link, gbps, stated = _slow_link(case)
    if s.zero_stage < 3 or case.gpus <= 1 or case.nodes <= 1 or not slow_link:
        return Cause.no("zero3_link")
    tcp, rdma = case.rate(rdma=False, network_gbps=gbps), case.rate(rdma=True)
    one_node = case.rate(gpus=case.gpus_per_node)
    if not tcp or rdma / tcp < MIN_RATIO:
        return Cause.no("zero3_link")
    return Cause(code="zero3_link", explains=_x(rdma / tcp), stated=stated,
                 fix=Fix(code="rdma", setting="NCCL_IB_HCA=mlx5", fixed=_tps(rdma)),
                 detail={"gbps": gbps, "tcp_tps": round(tcp, 1), "rdma_tps": round(rdma, 1), "one_node_tps": round(one_node, 1),
                         "nodes": case.nodes, "params_b": round(case.model.params_published_b, 1)})


def allreduce_link(case: TrainCase) -> Cause:
    """More cards, little faster: the gradients' all-reduce (or ZeRO's gathers) over the link the cards have."""
    s = case.setup
    if case.gpus <= 1 or s.zero_stage >= 3 and case.nodes > 1:
        return Cause.no("allreduce_link")
    link = s.interconnect or "pcie"
    if case.nodes <= 1 and link == "nvlink":
        return Cause.no("allreduce_link")
    one = case.rate(gpus=1)
    many = case.rate()
    if not many or not one:
        return Cause.no("allreduce_link")
    lost = case.gpus * one / many
    if lost < MIN_RATIO:
        return Cause.no("allreduce_link")
    accum = max(4, s.grad_accum * 4)
    _, gbps, _ = _slow_link(case)
    return Cause(code="allreduce_network" if case.nodes > 1 else "allreduce_link", explains=_x(lost),
                 fix=Fix(code="grad_accum", setting=f"gradient_accumulation_steps: {accum}",
                         fixed=_tps(case.rate(grad_accum=accum))),
                 detail={"speedup": round(many / one, 2), "gpus": case.gpus, "one_tps": round(one),
                         "many_tps": round(many), "no_p2p": 1.0 if link == "pcie_no_p2p" else 0.0,
                         "nodes": case.nodes, "gbps": gbps})


def moe_loop(case: TrainCase) -> Cause:
    if case.model.moe is None or case.knobs.strategy == "megatron" or case.knobs.framework == "megatron":
        return Cause.no("moe_loop")
    loop, grouped = case.rate(expert_loop=True), case.rate(expert_loop=False)
    if not loop or grouped / loop < MIN_RATIO:
        return Cause.no("moe_loop")
    return Cause(code="moe_loop", explains=_x(grouped / loop), stated=False,
                 fix=Fix(code="grouped_experts", setting="transformers>=5 (grouped_mm experts) / Megatron",
                         fixed=_tps(grouped)),
                 detail={"experts": case.model.moe.num_experts, "active_b": case.model.active_params_b or 0.0,
                         "loop_tps": round(loop)})


def checkpointing(case: TrainCase) -> Cause:
    s = case.setup
    if not s.grad_ckpt:
        return Cause.no("checkpointing")
    on, off = case.rate(), case.rate(grad_ckpt=False)
    if not on or off / on < MIN_RATIO:
        return Cause.no("checkpointing")
    fits = case.memory(grad_ckpt=False).per_gpu_gib <= case.capacity_gib
    return Cause(code="checkpointing", explains=_x(off / on), stated=case.is_stated("checkpointing"),
                 fix=Fix(code="no_checkpointing", setting="gradient_checkpointing: false", fixed=_tps(off), fits=fits),
                 detail={"on_tps": round(on), "off_tps": round(off)})


def eager_time(case: TrainCase) -> Cause:
    s = case.setup
    if s.attention != "eager" or not case.model.num_heads:
        return Cause.no("eager_time")
    rate = case.rate() / max(1, case.gpus)
    if rate <= 0:
        return Cause.no("eager_time")
    step = s.seq_len * s.micro_batch / rate
    scores = (case.model.num_layers or 0) * case.model.num_heads * s.seq_len ** 2 * s.micro_batch
    extra = scores * (EAGER_SCORE_BYTES + EAGER_BACKWARD_SCORE_BYTES) * SCORE_PASSES / (
        case.gpu.mem_bw_gb_s * 1e9 * BW_SHARE)
    ratio = (step + extra) / step
    if ratio < MIN_RATIO:
        return Cause.no("eager_time")
    flash = case.gpu.supports_flash_attn2
    return Cause(code="eager_time", explains=_x(ratio), stated=case.is_stated("attention"),
                 fix=Fix(code="flash" if flash else "sdpa", setting="flash_attn: fa2" if flash else "flash_attn: sdpa"),
                 detail={"seq": s.seq_len})


def qlora_dequant(case: TrainCase) -> Cause:
    if case.setup.method != "qlora":
        return Cause.no("qlora_dequant")
    q, lora = case.rate(), case.rate(method="lora", quant_bits=None)
    if not q or lora / q < MIN_RATIO:
        return Cause.no("qlora_dequant")
    fits = case.memory(method="lora", quant_bits=None).per_gpu_gib <= case.capacity_gib
    return Cause(code="qlora_dequant", explains=_x(lora / q),
                 fix=Fix(code="lora", setting="finetuning_type: lora (no quantization_bit)", fixed=_tps(lora),
                         fits=fits), detail={"qlora_tps": round(q)})


def no_bf16(case: TrainCase) -> Cause:
    g = case.gpu
    if g.supports_bf16 or case.knobs.precision not in ("amp-bf16", "pure-bf16"):
        return Cause.no("no_bf16")
    ratio = g.dense_16bit_tflops / max(1.0, g.fp32_tflops or 1.0)
    return Cause(code="no_bf16", explains=_x(ratio), fix=Fix(code="fp16", setting="fp16: true"),
                 detail={"fp16_tflops": g.dense_16bit_tflops, "fp32_tflops": g.fp32_tflops or 0.0})


def padding(case: TrainCase, avg_tokens: int | None) -> Cause:
    s = case.setup
    if avg_tokens is None or not case.is_stated("seq_len") or avg_tokens >= PADDING_SHARE * s.seq_len:
        return Cause.no("padding")
    return Cause(code="padding", explains=_x(s.seq_len / avg_tokens),
                 fix=Fix(code="packing", setting="packing: true"),
                 detail={"seq": s.seq_len, "avg": avg_tokens})


def data_wait(case: TrainCase) -> Cause:
    util = case.seen.util_pct
    if util is None or util >= LOW_UTIL_PCT or util <= 0:
        return Cause.no("data_wait")
    return Cause(code="data_wait", explains=_x(100.0 / util),
                 fix=Fix(code="dataloader", setting="dataloader_num_workers: 8, preprocessing_num_workers: 16"),
                 detail={"util": util})


SLOW_CAUSES = (offload, zero3_link, allreduce_link, moe_loop, eager_time, qlora_dequant, no_bf16, data_wait,
               checkpointing)
SCALING_CAUSES = (zero3_link, allreduce_link, offload, moe_loop, data_wait)
