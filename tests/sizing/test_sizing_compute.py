"""FLOPs per token by method, MFU priors, scaling efficiency and time, on hand-worked cases."""

from __future__ import annotations

import math

import pytest

from service.sizing.compute import (
    QLORA_SLOWDOWN,
    flops_per_token,
    mfu_prior,
    scaling_efficiency,
    training_time,
)
from service.sizing.types import TrainSetup
from tests.sizing.specs import decoder

# Tiny decoder: N = 189,440 matmul parameters (61,440 linear + 2 x 1000 x 64, see test_sizing_params).
N = 189_440
# Attention term per token at s=8: 12 x s x L x H x d = 12 x 8 x 2 x 4 x 16 = 12,288 (verl, sizing.md D7).
ATTN = 12_288


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        # Full training: forward 2N + backward 4N = 6N (Eleuther A1), + attention.
        (TrainSetup("full", seq_len=8, grad_ckpt=False), 6 * N + ATTN),
        (TrainSetup("pretrain", seq_len=8, grad_ckpt=False), 6 * N + ATTN),
        # LoRA / QLoRA: frozen weights need no weight-gradient GEMMs -> 4N (sizing.md E2).
        (TrainSetup("lora", seq_len=8, grad_ckpt=False), 4 * N + ATTN),
        (TrainSetup("qlora", quant_bits=4, seq_len=8, grad_ckpt=False), 4 * N + ATTN),
        # Checkpointing recomputes the forward: +2N, and +1/3 of the attention term (4 x s x L x H x d = 4,096).
        (TrainSetup("full", seq_len=8, grad_ckpt=True), 8 * N + ATTN + 4_096),
        (TrainSetup("lora", seq_len=8, grad_ckpt=True), 6 * N + ATTN + 4_096),
    ],
)
def test_flops_per_token_by_method(setup: TrainSetup, expected: float) -> None:
    assert flops_per_token(decoder(), setup) == pytest.approx(expected)


def test_freeze_pays_weight_gradients_for_the_trainable_share_only() -> None:
    # 4N + 2N x trainable fraction: a quarter trainable -> 4.5N.
    setup = TrainSetup("freeze", seq_len=8, grad_ckpt=False)
    assert flops_per_token(decoder(), setup, trainable_fraction=0.25) == pytest.approx(4.5 * N + ATTN)


def test_attention_term_is_linear_in_sequence_length_per_token() -> None:
    # Per token the attention FLOPs grow with s (12 s L H d); per sequence they grow with s^2.
    m = decoder()
    a = flops_per_token(m, TrainSetup("full", seq_len=1024, grad_ckpt=False)) - 6 * N
    b = flops_per_token(m, TrainSetup("full", seq_len=2048, grad_ckpt=False)) - 6 * N
    assert b == pytest.approx(2 * a)


@pytest.mark.parametrize(
    ("gpu_name", "model_name", "method", "expected"),
    [
        # Ampere: 0.42 from the Llama 2 card (0.39-0.46 implied, sizing.md C1) and Megatron 41.5 % at 22B (C2).
        ("A100 80G", "Qwen2-7B", "full", 0.42),
        # LoRA x 0.85 (smaller GEMMs); QLoRA also / 1.75 (gpu_poor's dequantisation cost, B5).
        ("A100 80G", "Qwen2-7B", "lora", 0.42 * 0.85),
        ("A100 80G", "Qwen2-7B", "qlora", 0.42 * 0.85 / QLORA_SLOWDOWN),
        ("A100 80G", "Qwen2-7B", "freeze", 0.42 * 0.9),
        # Hopper: log-linear between the Llama 3 card points 8B -> 0.20, 70B -> 0.31, 405B -> 0.38.
        ("H800", "Llama-3-8B", "full", 0.20),  # 8.03B: a hair past the 8B point
        ("H800", "Llama-3.1-405B", "full", 0.38),
        ("H800", "Qwen2-0.5B", "full", 0.20),  # below the first point: clamped
        # H20: compute-light Hopper, treated like an A100 (estimate).
        ("H20", "Qwen2-7B", "full", 0.42),
        # CNN / diffusion: 0.30 (estimate).
        ("A100 80G", "ResNet-50", "full", 0.30),
    ],
)
def test_mfu_priors(gpu, model, gpu_name: str, model_name: str, method: str, expected: float) -> None:
    prior = mfu_prior(gpu(gpu_name), model(model_name), method)
    assert prior.value == pytest.approx(expected, abs=0.002)
    assert prior.source  # every prior says where it comes from


def test_hopper_mfu_interpolates_on_log_params(gpu, model) -> None:
    # Qwen2.5-14B is published at 14.77B: t = ln(14.77/8)/ln(70/8) = 0.2828 -> 0.20 + 0.2828 x 0.11 = 0.2311.
    t = math.log(14.77 / 8) / math.log(70 / 8)
    assert mfu_prior(gpu("H800"), model("Qwen2.5-14B"), "full").value == pytest.approx(0.20 + t * 0.11, abs=1e-4)


def test_moe_mfu_uses_active_parameters(gpu, model) -> None:
    # Qwen3-30B-A3B: 3.35B active -> below the 8B point -> 0.20, not the 30B interpolation (~0.26).
    assert mfu_prior(gpu("H800"), model("Qwen3-30B-A3B"), "full").value == pytest.approx(0.20)


@pytest.mark.parametrize(
    ("gpu_name", "per_node", "nodes", "stage", "rdma", "expected"),
    [
        ("A100 80G", 1, 1, 0, False, 1.0),  # one GPU: nothing to discount
        ("A100 80G", 8, 1, 3, False, 1.0),  # NVLink 600 GB/s: the MFU priors already include it
        ("A10", 4, 1, 2, False, 0.85),  # PCIe all-reduce
        ("A10", 4, 1, 3, False, 0.65),  # PCIe ZeRO-3 gathers
        ("A800", 8, 1, 3, False, 0.95),  # NVLink cut to 400 GB/s
        ("A100 80G", 8, 2, 3, True, 1.0),  # RDMA between nodes
        ("A100 80G", 8, 2, 3, False, 0.5),  # TCP, ZeRO-3
        ("A100 80G", 8, 2, 2, False, 0.7),  # TCP, DDP / ZeRO-2
        ("A10", 4, 2, 3, False, 0.65 * 0.5),  # both discounts multiply
    ],
)
def test_scaling_efficiency(gpu, gpu_name: str, per_node: int, nodes: int, stage: int, rdma: bool,
                            expected: float) -> None:
    assert scaling_efficiency(gpu(gpu_name), per_node, nodes, stage, rdma) == pytest.approx(expected)


def test_training_time_by_hand(gpu, model) -> None:
    # Llama-2-7B matmul params: 6,738,415,616 minus the 266,240 RMSNorm weights = 6,738,149,376.
    # Full, s=4096, no checkpointing: 6 x 6,738,149,376 + 12 x 4096 x 32 x 32 x 128 = 40,428,896,256 + 6,442,450,944
    # = 46,871,347,200 FLOPs/token. 1e9 tokens on 8 A100 (312 TFLOPS x MFU 0.42 x scaling 0.9 = 9.4349e14 FLOP/s):
    # 4.6871e19 / 9.4349e14 s = 13.80 h.
    setup = TrainSetup("full", seq_len=4096, grad_ckpt=False)
    t = training_time(model("Llama-2-7B"), gpu("A100 80G"), setup, tokens=1e9, total_gpus=8, scaling=0.9)
    assert t.flops_per_token == pytest.approx(46_871_347_200)
    rate = 8 * 312e12 * 0.42 * 0.9
    assert t.hours == pytest.approx(13.80, abs=0.005)
    assert t.throughput_tokens_per_s == pytest.approx(rate / 46_871_347_200)


def test_vgpu_slice_gets_its_share_of_peak(gpu, model) -> None:
    # A quarter of an A10 takes 4x as long as the whole card.
    setup = TrainSetup("lora", seq_len=512)
    whole = training_time(model("Qwen2-0.5B"), gpu("A10"), setup, tokens=1e8, total_gpus=1)
    slice_ = training_time(model("Qwen2-0.5B"), gpu("A10"), setup, tokens=1e8, total_gpus=1, gpu_fraction=0.25)
    assert slice_.hours == pytest.approx(4 * whole.hours)


def test_cnn_time_counts_samples(gpu, model) -> None:
    # ResNet-50: forward 8.18 GFLOPs/sample (2 x torchvision's 4.09 GMACs) as listed in models.yaml;
    # training 3x forward, +1/3 with checkpointing off -> 3 x gflops x 1e9 per sample.
    m = model("ResNet-50")
    setup = TrainSetup("full", grad_ckpt=False)
    t = training_time(m, gpu("A100 80G"), setup, tokens=0, total_gpus=1, samples=1e6)
    per_sample = 3 * (m.gflops_per_sample or 0) * 1e9
    assert t.flops_total == pytest.approx(per_sample * 1e6)
    assert t.hours == pytest.approx(per_sample * 1e6 / (312e12 * 0.30) / 3600)
