"""Weights resident on one GPU of a serving replica, by weight dtype and tensor-parallel degree.

How the engines lay weights out (vLLM vllm/model_executor/layers/linear.py and vocab_parallel_embedding.py,
SGLang's copies of both): q/o/MLP and expert matrices are split over the TP ranks; K and V are split by head and
replicated when there are fewer KV heads than ranks (each rank keeps at least one); the MoE router and DeepSeek
MLA's down-projections (q_a_proj, kv_a_proj_with_mqa) are replicated; the embedding and lm_head are split by
vocabulary (padded to a multiple of 64); norms are replicated. Every MoE expert is resident: tensor parallelism
splits each expert's width, expert parallelism splits the experts, the bytes per GPU are the same.

Quantised checkpoints quantise the linear layers only; embeddings, lm_head, norms and the router stay 16-bit
(AutoAWQ / GPTQ `modules_to_not_convert`, llm-compressor's default `ignore: [lm_head]`). Bytes per weight:
int4 AWQ/GPTQ with group size 128 = 4-bit weight + one fp16 scale and one packed 4-bit zero point per group
(0.5 + 2.5 / 128 B); fp8 and int8 W8A8 = 1 B + a per-channel fp32 scale. MXFP4 (gpt-oss) quantises the MoE
experts only: 4-bit values + one 8-bit scale per 32 (0.5 + 1 / 32 B), each expert matrix padded to multiples
of 256 in both dimensions by vLLM's MXFP4 MoE kernels (which the measured gpt-oss loads, 13.72 GiB for 20b and
17.22 GiB per GPU for 120b on 4 GPUs, bear out: unpadded counts fall 7-13 % short); the rest stays 16-bit.
"""

from __future__ import annotations

from service.catalog.schema import ModelSpec
from service.sizing.params import ParamCounts, count_params, head_dim
from service.sizing.serving.types import GIB, WeightsDtype, WeightsEstimate

INT4_GROUP_SIZE = 128
VOCAB_PADDING = 64  # vLLM DEFAULT_VOCAB_PADDING_SIZE
_REPLICATED = frozenset({"router", "q_a_proj", "kv_a_proj_with_mqa"})
_KV = frozenset({"k_proj", "v_proj"})


def quantised_bytes_per_param(dtype: WeightsDtype, d_in: int) -> float:
    """Bytes per weight of a linear layer stored in `dtype`, scales and zero points included."""
    if dtype in ("bf16", "fp16"):
        return 2.0
    if dtype == "int4":
        return 0.5 + 2.5 / INT4_GROUP_SIZE  # fp16 scale + 4-bit zero point per group of 128 inputs
    if dtype == "mxfp4":
        return 0.5 + 1.0 / 32  # e2m1 values + an e8m0 scale per 32
    return 1.0 + 4.0 / max(1, d_in)  # fp8 / int8: one fp32 scale per output channel


MXFP4_PAD = 256


def _pad(n: int, to: int) -> int:
    return -(-n // to) * to


def _kv_share(m: ModelSpec, tp: int) -> float:
    """Fraction of the K/V projections one rank holds: 1/tp, but at least one whole KV head."""
    kv = m.num_kv_heads or m.num_heads or 1
    return max(1.0 / tp, 1.0 / kv)


def _padded_vocab_share(m: ModelSpec, tp: int) -> float:
    vocab = m.vocab_size or 0
    padded = -(-vocab // VOCAB_PADDING) * VOCAB_PADDING
    return padded / tp


def stage_fraction(m: ModelSpec, pp: int) -> float:
    """The share of the layers the largest of `pp` pipeline stages holds (vLLM splits them evenly)."""
    layers = m.num_layers or 1
    return -(-layers // max(1, pp)) / layers


def estimate_weights(m: ModelSpec, dtype: WeightsDtype = "bf16", tp: int = 1, pp: int = 1) -> WeightsEstimate:
    """Weights per GPU for one replica of `tp` x `pp` GPUs (see the module docstring for the layout). Pipeline
    stages hold their share of the layers; the first holds the embedding (and a vision tower), the last the
    lm_head: the figure is the largest stage's."""
    c: ParamCounts = count_params(m)
    tp = max(1, tp)
    layer_share = stage_fraction(m, pp)
    notes: list[str] = []
    quant_bytes = 0.0
    quant_params = 0.0
    replicated_bytes = 0.0
    expert_bytes = 0.0
    for x in c.linears:
        n = float(x.d_in * x.d_out * x.count)
        if x.name == "router":
            share = 1.0
            replicated_bytes += n * 2.0
            quant_params += n
            continue
        if x.name in _REPLICATED:
            share = 1.0
        elif x.name in _KV and m.mla is None:
            share = _kv_share(m, tp)
        else:
            share = 1.0 / tp
        if dtype == "mxfp4" and m.moe is not None and not x.name.startswith("expert_"):
            b = n * share * 2.0  # MXFP4 checkpoints quantise the experts only
        elif dtype == "mxfp4" and m.moe is not None:
            b = float(_pad(x.d_in, MXFP4_PAD) * _pad(x.d_out, MXFP4_PAD) * x.count) * share * quantised_bytes_per_param(dtype, x.d_in)
        else:
            b = n * share * quantised_bytes_per_param(dtype, x.d_in)
        quant_bytes += b
        quant_params += n * share
        if x.name.startswith("expert_"):
            expert_bytes += b
    h = m.hidden_size or 0
    embedding = _padded_vocab_share(m, tp) * h if m.kind == "decoder" else c.embedding / tp
    head = 0.0 if m.tie_word_embeddings or m.kind != "decoder" else _padded_vocab_share(m, tp) * h
    norms = max(0.0, c.total - c.linear - c.embedding - c.lm_head)  # norms and biases, kept whole
    vision = (m.vision_params_b or 0.0) * 1e9 / tp
    if vision:
        notes.append(f"vision tower {m.vision_params_b:g}B kept 16-bit")
    quant_bytes *= layer_share
    quant_params *= layer_share
    expert_bytes *= layer_share
    replicated_bytes *= layer_share
    norms *= layer_share
    if pp > 1:  # the first stage holds the embedding and the vision tower, the last the lm_head
        embedding, head = max(embedding + vision, head), 0.0
        vision = 0.0
    unquant_bytes = 2.0 * (embedding + head + norms + vision) + replicated_bytes
    if dtype not in ("bf16", "fp16"):
        notes.append(f"{dtype} linear layers; embeddings, lm_head, norms and router kept 16-bit")
    if m.num_kv_heads and tp > m.num_kv_heads and m.mla is None:
        notes.append(f"{m.num_kv_heads} KV heads on {tp} GPUs: K/V projections replicated, one head per GPU")
    total = quant_bytes + unquant_bytes
    active = total
    if m.moe is not None and expert_bytes:
        active = total - expert_bytes * (1 - m.moe.top_k / m.moe.num_experts)
    # The output head is read once per step whatever the batch; the embedding is a gather (a few rows).
    active -= 2.0 * embedding if not m.tie_word_embeddings and pp == 1 else 0.0
    return WeightsEstimate(
        weights_gib_per_gpu=total / GIB,
        quantised_gib_per_gpu=quant_bytes / GIB,
        unquantised_gib_per_gpu=unquant_bytes / GIB,
        params_per_gpu=quant_params + embedding + head + norms + vision,
        active_read_gib_per_gpu=max(0.0, active) / GIB,
        expert_gib_per_gpu=expert_bytes / GIB,
        notes=tuple(notes),
    )


def attention_dims_per_gpu(m: ModelSpec, tp: int) -> tuple[float, float]:
    """(query width, KV width) per GPU: what one token's attention reads and computes on one rank."""
    heads = (m.num_heads or 0) / max(1, tp)
    if m.mla is not None:
        a = m.mla
        return heads * (a.qk_nope_head_dim + a.qk_rope_head_dim), float(a.kv_lora_rank + a.qk_rope_head_dim)
    hd = head_dim(m)
    kv = m.num_kv_heads or m.num_heads or 1
    return heads * hd, max(1.0, kv / max(1, tp)) * hd
