"""fitcheck-llm (PyPI, a published LoRA/QLoRA memory estimator) called offline on the same row as the engine.

fitcheck sizes one GPU: the base weights (fp16/bf16/fp32, or NF4 / int8 with the embeddings and head left wide),
LoRA adapters, the optimizer (AdamW fp32 or bf16 states, 8-bit Adam), gradients, activations with or without
checkpointing and FlashAttention, and a context + fragmentation overhead. It is given the architecture directly
(its ModelConfig), never a Hub download. Where it cannot express the row the answer is n/a with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.catalog.schema import GpuSpec, ModelSpec
from service.evals.runs import Case
from service.sizing.params import count_params

# our GPU ids -> fitcheck's GPU_DB keys (its measured overhead profiles are keyed by these)
_GPU_KEYS = {"T4": "t4", "A10": "a10", "L4": "l4", "RTX-3090": "3090", "RTX-4090": "4090", "A100-40G-SXM": "a100-40",
             "A100-40G-PCIE": "a100-40", "A100-80G-SXM": "a100-80", "A100-80G-PCIE": "a100-80", "H100-SXM": "h100",
             "H200-SXM": "h200", "L40S": "l40s", "L40": "l40", "V100-16G-SXM2": "v100-16", "B200": "b200"}
_TARGETS = {"qv": ["q_proj", "v_proj"], "attn": ["q_proj", "k_proj", "v_proj", "o_proj"],
            "all_linear": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]}


@dataclass(frozen=True)
class PeerResult:
    gib: float | None  # fitcheck's total on one GPU (GiB), None with a reason
    reason: str = ""
    verdict: str = ""  # fitcheck's own verdict (safe / uncertain / does_not_fit) when a card is known


def fitcheck_memory(case: Case) -> PeerResult:
    try:
        import fitcheck
    except ImportError:
        return PeerResult(None, "fitcheck-llm not installed (pip install fitcheck-llm)")
    s, m = case.setup, case.model
    if s is None or m is None:
        return PeerResult(None, case.na or "row not sized")
    if case.row.gpus > 1:
        return PeerResult(None, "fitcheck sizes one GPU (no data parallelism or sharding)")
    if m.kind != "decoder" or m.moe is not None or m.mla is not None or m.mlp == "gelu":
        return PeerResult(None, "fitcheck models dense SwiGLU decoders only")
    if s.method not in ("full", "lora", "qlora"):
        return PeerResult(None, f"fitcheck has no {s.method} training")
    if s.offload != "none":
        return PeerResult(None, "fitcheck has no CPU offload")
    optimizer, dtype = {"adamw": ("adamw", "bf16" if s.precision == "pure_bf16" else "fp32"),
                        "adamw_8bit": ("adam8bit", "fp32"), "paged_adamw_8bit": ("adam8bit", "fp32")}.get(
        s.optimizer, ("", ""))
    if not optimizer:
        return PeerResult(None, f"fitcheck has no {s.optimizer}")
    c = count_params(m)
    cfg = fitcheck.ModelConfig(
        name=m.id, num_params=int(c.total), hidden_size=m.hidden_size or 0, num_layers=m.num_layers or 0,
        num_attention_heads=m.num_heads or 0, num_kv_heads=m.num_kv_heads or m.num_heads or 0,
        intermediate_size=m.intermediate_size or 0, vocab_size=m.vocab_size or 0,
        head_dim=m.head_dim or (m.hidden_size or 0) // max(1, m.num_heads or 1),
        tie_word_embeddings=m.tie_word_embeddings)
    quant = "none" if s.method != "qlora" else ("int8" if s.quant_bits == 8 else "nf4")
    precision = {"bf16": "bf16", "pure_bf16": "bf16", "fp16": "fp16", "fp32": "fp32", "fp8": "bf16"}[s.precision]
    training = fitcheck.TrainingConfig(
        precision=precision, quantization=quant, double_quant=quant == "nf4", optimizer=optimizer,
        optimizer_dtype=dtype, batch_size=s.micro_batch, seq_len=s.seq_len,
        lora_rank=None if s.method == "full" else s.lora_rank,
        lora_targets=list(_TARGETS[s.lora_targets]), grad_checkpoint=s.grad_ckpt,
        flash_attn=s.fused_attention)
    key = _GPU_KEYS.get(case.gpu.id) if case.gpu is not None else None
    gpu = fitcheck.get_gpu(key) if key else fitcheck.get_gpu(
        "row GPU", vram_mib=int((case.gpu.memory_gib if case.gpu else 80) * 1024))
    try:
        report = fitcheck.estimate(cfg, training, gpu)
    except ValueError as exc:
        return PeerResult(None, f"fitcheck refused: {exc}"[:160])
    return PeerResult(report.total_mib / 1024, "", report.verdict)


# --- llm-d-planner's KV capacity (a peer on the serving rows) ------------------------------------------------------
# Its formula as published (llm-d-incubation/llm-d-planner src/planner/capacity_planner.py and the constants of
# data/configuration/vllm_memory_constants.json, calibrated by its authors on vLLM 0.19.0, H100-80GB): per GPU,
# the card's memory x gpu_memory_utilization - weights / (tp x pp) - an activation constant per architecture
# (TP-invariant) - a non-PyTorch constant (2.10 GiB at TP >= 2); tokens = that pool over the per-token KV bytes
# (MLA: layers x (kv_lora_rank + rope) x dtype bytes) divided by tp x pp. We call it with our architecture rows
# (no Hub download) and our weights figure (its safetensors count of the same checkpoint).
LLMD_ACTIVATION_GIB = {"llama": 1.89, "llama2": 1.89, "llama3": 1.89, "qwen2": 2.25, "qwen2.5": 2.25,
                       "qwen3": 2.21, "deepseek": 1.93, "deepseek_v2": 1.93, "deepseek_v3": 1.93, "mixtral": 1.21,
                       "phi3": 1.52, "qwen2_moe": 2.47, "qwen3_moe": 2.68, "gemma2": 3.65, "gemma3": 3.94,
                       "gemma": 3.63, "granite": 0.85}
LLMD_ACTIVATION_BASE_GIB = {"dense": 2.00, "moe": 2.50}
LLMD_NON_TORCH_GIB = {"tp1_pp1": 0.27, "tp1_ppN": 0.07, "tpN": 2.10}


def llmd_kv_tokens(m: ModelSpec, gpu: GpuSpec, tp: int, pp: int, util: float, weights_gib_per_gpu: float,
                   kv_bytes: int = 2) -> float | None:
    """llm-d-planner's predicted KV cache tokens for one vLLM replica (module note); None when it has no figure."""
    layers = m.num_layers or 0
    if not layers or not m.hidden_size:
        return None
    if m.mla is not None:
        per_token = layers * (m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * kv_bytes
    else:
        heads = m.num_heads or 1
        head_dim = m.head_dim or m.hidden_size // heads
        per_token = layers * 2 * head_dim * (m.num_kv_heads or heads) * kv_bytes
    activation = LLMD_ACTIVATION_GIB.get(m.family, LLMD_ACTIVATION_BASE_GIB["moe" if m.moe else "dense"])
    non_torch = LLMD_NON_TORCH_GIB["tpN"] if tp >= 2 else LLMD_NON_TORCH_GIB["tp1_ppN" if pp >= 2 else "tp1_pp1"]
    pool_gib = gpu.memory_gib * util - weights_gib_per_gpu - activation - non_torch
    if pool_gib <= 0:
        return 0.0
    return pool_gib * 1024**3 / (per_token / (tp * pp))
