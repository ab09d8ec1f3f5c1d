"""Stored activations of one micro-batch: per decoder layer by checkpointing mode, and the loss's logits.

The per-layer terms are the tensors the transformers model code keeps for the backward, read off fake-tensor traces
of one training step (scripts/trace_memory.py -> evals/traces/*.json; checked by tests/sizing/test_sizing_traces.py
and service/evals/traces.py). Per token, with h the hidden size, q = heads x head_dim, kv = kv_heads x head_dim,
I the MLP width (16-bit activations unless said):

    norms (2 per layer; Gemma 4): the fp32 upcast of the input that RMSNorm's variance keeps, 4 B; with a trained
        weight also the normalised tensor its weight gradient needs (2 B, 4 B for fp32 weights or Gemma's fp32
        norm). Qwen3 / Gemma-3 add q/k norms over q + kv the same way.
    linear inputs: a trained linear keeps its input, 2 B, once per distinct tensor (q/k/v share the attention
        input, gate/up the MLP input); with fp32 weights autocast casts the input for each linear apart; a frozen
        linear keeps nothing (grad_input needs only the weight, bitsandbytes' MatMul4Bit saves only the packed
        weight); a LoRA-adapted linear keeps its own bf16 copy of its input (PEFT casts it to the fp32 adapter's
        dtype and autocast casts it back for lora_A), 2 B x d_in, plus lora_A's r-wide output.
    attention, fused kernel (SDPA / FlashAttention-2): Q, K, V (2 B each; no repeat_kv: transformers passes
        enable_gqa), the output (the o_proj input is a view of it) and the fp32 logsumexp, 4 B per head.
        Eager (transformers' eager_attention_forward): Q and repeat_kv's expanded K and V (2 B x q each), the fp32
        softmax output (4 B) and its 16-bit copy (2 B) per score, heads x s per token (Gemma-2's soft-capping
        tanh keeps 2 B more), and the o_proj input (a contiguous copy of the transposed output).
    SwiGLU MLP: gate and up outputs and act(gate), 6 B x I, kept whatever is frozen (the MLP input needs a
        gradient); down_proj's input 2 B x I where down_proj trains or is adapted.
    MoE (transformers' grouped_mm experts): per routed copy (top_k per token) the gathered input and the expert
        output before weighting (2 B x h each), gate_up output, act and product (8 B x I_expert); frozen experts
        (LoRA) keep the gathered input and gate_up + act only (2 B x h, 6 B x I_expert); the router's fp32
        probabilities (4 B x experts); shared experts as a dense MLP.

A linear whose input nothing upstream needs a gradient for (the first layer when the embedding is frozen) keeps
less; that layer is sized as the others (one layer in L).

Checkpointing (A6): `full` keeps each layer's input (2 B x h; 4 B when prepare_model_for_kbit_training or fp32
weights put the residual stream in fp32) and recomputes one layer at a time; `selective` keeps the linear layers'
outputs and recomputes the attention core and the elementwise ops (Megatron-LM's selective recomputation;
torchtune's and PyTorch's op-level selective checkpointing keep the matmul outputs the same way): no s^2 scores, no
norm or activation-function outputs. Liger-Kernel (its fused RMSNorm keeps the input and the rstd; its SwiGLU keeps
gate and up only) when enabled.

Logits (full vocabulary, Hugging Face's loss path): the bf16 logits the model output keeps (2 B), the fp32
log-softmax saved for the backward (4 B), its fp32 gradient (4 B) and the bf16 gradient (2 B): 12 B per vocabulary
entry per token; 16 B in fp32 training. A head prepare_model_for_kbit_training upcast to fp32 still emits bf16
logits under autocast, plus the head weight's bf16 cast while it computes (2 B x V x h). A chunked or fused
cross-entropy (Liger's fused linear cross-entropy, Cut Cross-Entropy, torchtune's LinearCrossEntropyLoss, TRL's
chunked_nll) never holds the whole: Liger sizes its chunk so the chunk's logits have about as many elements as the
hidden states (chunk_size = BT / ceil(V / H), rounded to a power of two), kept in fp32 with their fp32 gradient,
plus the bf16 gradient of the hidden states: 10 B per hidden element.
"""

from __future__ import annotations

from service.catalog.schema import ModelSpec
from service.sizing.params import head_dim, shared_expert_width
from service.sizing.types import GIB, TrainSetup

LOGIT_BYTES = 12  # bf16 logits 2 + fp32 log-softmax 4 + fp32 grad 4 + bf16 grad 2 (see module docstring)
LOGIT_BYTES_FP32_HEAD = 16  # fp32 logits 4 + log-softmax 4 + grad 4 + grad of the fp32 logits 4
# Gemma-2 soft-caps its logits (final_logit_softcapping: / cap, tanh, x cap; transformers models/gemma2): tanh keeps
# its 16-bit output, +2 B per vocabulary entry per token (the traces read +1.97 to +2.19)
LOGIT_SOFTCAP_BYTES = {"gemma2": 2}
FUSED_CE_BYTES = 10  # per hidden element: fp32 chunk logits 4 + their fp32 gradient 4 + bf16 hidden gradient 2
EAGER_SCORE_BYTES = 6  # fp32 softmax output 4 + its 16-bit copy 2, per score (transformers eager attention)
SOFTCAP_SCORE_BYTES = 2  # Gemma-2's attention soft-capping: tanh keeps its 16-bit output
# gpt-oss's eager attention takes the softmax in the logits' own 16-bit dtype (after concatenating the sinks), and
# the AV matmul keeps a view of it: 2 B per score (transformers models/gpt_oss eager_attention_forward)
EAGER_SCORE_BYTES_BY_FAMILY = {"gpt_oss": 2}
FLASH_LSE_BYTES = 4  # fp32 logsumexp per head and token (FlashAttention-2, SDPA's flash kernel)
# The backward of one eager attention layer adds the scores' gradients (the 16-bit gradient of the probabilities,
# the fp32 one of the softmax, its input's) over what the layer keeps: fitted on the traces where the layers, not
# the loss, set the peak (scripts/fit_traces.py: 5.65 B per score on 100 traces)
EAGER_BACKWARD_SCORE_BYTES = 5.65
# Per element, from the traces (evals/traces): see the module docstring
NORM_INPUT_BYTES = 4  # RMSNorm's fp32 upcast of its input, kept by the variance's pow
NORM_WEIGHT_GRAD_BYTES = 2  # the normalised tensor a trained norm weight's gradient needs (bf16 weights)
ACT_BYTES = 2  # a 16-bit activation
MLP_CORE_BYTES = 6  # SwiGLU: gate output, up output, act(gate), per intermediate element
# Per routed copy (top_k per token). Trained experts: the gathered input + the expert output before weighting
# (2 x 2 B per h), gate_up output 4 + act 2 + product (down's input) 2 per I_expert. Frozen experts (LoRA): the
# grouped GEMMs keep no input for a weight gradient: the gathered input (2 B per h), gate_up output + act (6 B).
EXPERT_BYTES_PER_H = 4
EXPERT_BYTES_PER_I = 8
FROZEN_EXPERT_BYTES_PER_H = 2
FROZEN_EXPERT_BYTES_PER_I = 6
# gpt-oss's clamped SwiGLU (gate and up clamped, sigmoid(alpha x gate), (up + 1) x glu: transformers models/gpt_oss
# GptOssExperts) keeps more per I_expert: fitted on its traces (a constant per token at every length), trained /
# frozen experts
EXPERT_EXTRA_BYTES_PER_I = {"gpt_oss": (7.75, 6.25)}
ROUTER_PROB_BYTES = 4  # fp32 softmax over the experts
LIGER_NORM_BYTES = 2  # LigerRMSNorm keeps its 16-bit input (and a per-row rstd)
LIGER_SWIGLU_BYTES = 4  # LigerSiLUMulFunction keeps gate and up, recomputes act(gate) * up
# Families whose layers carry four norms computed in fp32 (Gemma's pre/post attention and feed-forward RMSNorm,
# weight applied as 1 + w in fp32: transformers models/gemma2, gemma3) and fused projections (Phi-3's qkv_proj and
# gate_up_proj, GLM-4's gate_up_proj: one linear, one input copy)
GEMMA_NORMS = frozenset({"gemma2", "gemma3"})
FUSED_QKV = frozenset({"phi3", "phi4"})
FUSED_GATE_UP = frozenset({"phi3", "phi4", "glm4"})
ATTN_NAMES = ("q", "k", "v", "o")
MLP_NAMES = ("gate", "up", "down")
_ADAPTED = {"qv": frozenset({"q", "v"}), "attn": frozenset(ATTN_NAMES),
            "all_linear": frozenset(ATTN_NAMES + MLP_NAMES)}
# Non-transformer models (estimates, unverified): stored activations per sample. CNNs: 12.5 MiB per forward
# GFLOP (ResNet-50, 8.2 GFLOPs at 224 px, ~100 MiB/sample in mixed precision); diffusion UNets at 1024 px:
# 12 GiB/sample, 3 GiB with checkpointing. Checkpointing keeps ~30 % of CNN activations.
ACT_MIB_PER_GFLOP = 12.5
DIFFUSION_ACT_GIB = 12.0
CKPT_KEEP_NON_TRANSFORMER = 0.3


def _mlp_width(m: ModelSpec) -> float:
    """Intermediate width a token passes through (MoE: top-k experts and the shared expert)."""
    if m.moe is not None:
        return float(m.moe.moe_intermediate_size * m.moe.top_k + shared_expert_width(m))
    return float(m.intermediate_size or 0)


def _kv_dim(m: ModelSpec) -> int:
    heads = m.num_heads or 0
    return (m.num_kv_heads or heads) * head_dim(m) if m.mla is None else (m.hidden_size or 0)


def _dims(m: ModelSpec) -> tuple[int, int, int, int]:
    """(query width, key width, value width, output-projection input width) of one layer's attention."""
    heads = m.num_heads or 0
    if m.mla is not None:
        qk = heads * (m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim)
        v = heads * m.mla.v_head_dim
        return qk, qk, v, v
    q = heads * head_dim(m)
    kv = (m.num_kv_heads or heads) * head_dim(m)
    return q, kv, kv, q


def _h_bytes(setup: TrainSetup) -> int:
    """Bytes per element of the residual stream: fp32 when the embedding is fp32 (fp32 weights, or QLoRA after
    prepare_model_for_kbit_training); autocast does not cast the residual additions."""
    return 4 if setup.fp32_weights or setup.method == "qlora" and setup.kbit_upcast else 2


def residual_bytes(setup: TrainSetup) -> int:
    """Bytes per element of the residual stream (see _h_bytes)."""
    return _h_bytes(setup)


def _trains_base(setup: TrainSetup) -> bool:
    return setup.method in ("full", "pretrain", "freeze")


def _adapted(setup: TrainSetup) -> frozenset[str]:
    return _ADAPTED[setup.lora_targets] if setup.method in ("lora", "qlora") else frozenset()


def _score_bytes(m: ModelSpec, setup: TrainSetup) -> float:
    """The attention kernel's own memory per layer beyond Q, K, V: logsumexp, or eager's scores and K/V copies."""
    s, b, heads = setup.seq_len, setup.micro_batch, m.num_heads or 0
    if setup.fused_attention:
        return float(FLASH_LSE_BYTES * heads * s * b)
    q, k, v, _ = _dims(m)
    expanded = ACT_BYTES * s * b * (max(0, q - k) + max(0, q - v)) if m.mla is None else 0  # repeat_kv
    return float(_eager_score_bytes(m) * heads * s * s * b + expanded)


def _eager_score_bytes(m: ModelSpec) -> float:
    """Bytes an eager attention layer keeps per score."""
    return EAGER_SCORE_BYTES_BY_FAMILY.get(m.family, EAGER_SCORE_BYTES) + (
        SOFTCAP_SCORE_BYTES if m.family == "gemma2" else 0)


def _norm_bytes(width: float, count: int, setup: TrainSetup, gemma: bool) -> float:
    """Per token: `count` RMSNorms over `width` elements."""
    if setup.liger_swiglu:
        return float(count * width * LIGER_NORM_BYTES)
    per = NORM_INPUT_BYTES
    if _trains_base(setup):
        per += 4 if gemma or setup.fp32_weights else NORM_WEIGHT_GRAD_BYTES
    return float(count * width * per)


def _linear_input_bytes(m: ModelSpec, setup: TrainSetup, q: int, o_in: int, inter: float) -> float:
    """Per token: the inputs the layer's linears keep for their weight gradients (see the module docstring)."""
    h, r = m.hidden_size or 0, setup.lora_rank
    fused_qkv, fused_gu = m.family in FUSED_QKV, m.family in FUSED_GATE_UP
    a = m.mla
    widths: dict[str, float] = {"q": h, "k": h, "v": h, "o": o_in, "gate": h, "up": h, "down": inter}
    attn: tuple[str, ...] = ()
    if a is not None:
        widths.update(q_b=a.q_lora_rank, kv_b=a.kv_lora_rank)
        attn = ("q", "kv") if a.q_lora_rank else ("kv",)
    out = 0.0
    eager_o = o_in if not setup.fused_attention else 0  # the fused kernel's saved output is o_proj's input
    if _trains_base(setup):
        if setup.fp32_weights:  # autocast casts each linear's fp32 input apart; 16-bit inputs pass as they are
            qkv = 1 if fused_qkv else 3
            gate_up = 0 if inter == 0 else (1 if fused_gu else 2)
            out += ACT_BYTES * h * (qkv + gate_up)
        else:
            out += ACT_BYTES * h * (1 + (1 if inter else 0))  # attention input, MLP input: once each
        out += ACT_BYTES * (eager_o + inter)
        if a is not None:
            out += ACT_BYTES * sum(widths[f"{x}_b"] for x in attn)  # q_b_proj / kv_b_proj inputs (latents)
        return out
    adapted = _adapted(setup)
    if a is not None:  # the adapted projections of MLA: q_b / kv_b (qv, attn) and the down-projections (attn)
        names = {"q": ("q_b", "q") if a.q_lora_rank else ("q",), "k": ("kv_b",), "v": ("kv_b",),
                 "o": ("o",)}
        seen: set[str] = set()
        for x in ATTN_NAMES:
            if x in adapted:
                for n in names[x]:
                    if n not in seen:
                        seen.add(n)
                        out += ACT_BYTES * widths[n] + ACT_BYTES * r
        adapted = adapted - frozenset(ATTN_NAMES)
    for group in (("q", "k", "v"), ("gate", "up")):
        hit = [x for x in group if x in adapted]
        fused = fused_qkv if group[0] == "q" else fused_gu
        copies = (1 if hit else 0) if fused else len(hit)
        if group[0] == "gate" and inter == 0:
            copies = 0
        out += copies * (ACT_BYTES * widths[group[0]] + ACT_BYTES * r)
    for x in ("o", "down"):
        if x in adapted and widths[x]:
            out += ACT_BYTES * widths[x] + ACT_BYTES * r
    return out


def _mlp_core_bytes(m: ModelSpec, setup: TrainSetup) -> tuple[float, float]:
    """Per token: (the MLP's own kept tensors, the dense width whose down_proj input a trained linear keeps)."""
    h = m.hidden_size or 0
    core = LIGER_SWIGLU_BYTES if setup.liger_swiglu else MLP_CORE_BYTES
    if m.moe is None:
        inter = float(m.intermediate_size or 0)
        return core * inter, inter
    e = m.moe
    trained = _trains_base(setup)
    per_h, per_i = ((EXPERT_BYTES_PER_H, float(EXPERT_BYTES_PER_I)) if trained
                    else (FROZEN_EXPERT_BYTES_PER_H, float(FROZEN_EXPERT_BYTES_PER_I)))
    extra = EXPERT_EXTRA_BYTES_PER_I.get(m.family)
    per_i += (extra[0] if trained else extra[1]) if extra else 0.0
    routed = e.top_k * (per_h * h + per_i * e.moe_intermediate_size)
    shared = float(shared_expert_width(m))
    return routed + ROUTER_PROB_BYTES * e.num_experts + core * shared, shared


def layer_terms(m: ModelSpec, setup: TrainSetup) -> dict[str, float]:
    """One decoder layer's kept tensors for one micro-batch, by group (bytes), without recomputation."""
    tokens = setup.seq_len * setup.micro_batch
    h = m.hidden_size or 0
    gemma = m.family in GEMMA_NORMS
    q, k, v, o_in = _dims(m)
    norms = _norm_bytes(h, 4 if gemma else 2, setup, gemma)
    if m.qk_norm:
        norms += _norm_bytes(q + k, 1, setup, gemma)
    if m.mla is not None:
        norms += _norm_bytes(m.mla.q_lora_rank + m.mla.kv_lora_rank, 1, setup, False)
    # Q, K, V (eager: repeat_kv's expansion is in _score_bytes) and, for a fused kernel, its output
    attention = ACT_BYTES * (q + k + v + (o_in if setup.fused_attention else 0))
    mlp, inter = _mlp_core_bytes(m, setup)
    inputs = _linear_input_bytes(m, setup, q, o_in, inter)
    return {"norms": norms * tokens, "linear_inputs": inputs * tokens, "attention": attention * tokens,
            "scores": _score_bytes(m, setup), "mlp": mlp * tokens}


def decoder_layer_act_bytes(m: ModelSpec, setup: TrainSetup) -> float:
    """Stored activations of one transformer layer for one micro-batch, without recomputation."""
    if m.mlp == "gelu":
        return _gelu_layer_act_bytes(m, setup)
    return float(sum(layer_terms(m, setup).values()))


def _gelu_layer_act_bytes(m: ModelSpec, setup: TrainSetup) -> float:
    """Encoders and GPT-style layers (Korthikanti et al., A2, without dropout masks): not traced here."""
    s, b = setup.seq_len, setup.micro_batch
    h, hb = m.hidden_size or 0, _h_bytes(setup)
    mlp = 2 * s * b * h + 2 * 2 * s * b * (m.intermediate_size or 0)  # fc1 input, gelu input + fc2 input
    attn = hb * s * b * h + 2 * s * b * h + 4 * s * b * _kv_dim(m) + 2 * s * b * h  # qkv input, Q, K+V, o input
    norms = 2 * hb * s * b * h
    return float(attn + _score_bytes(m, setup) + mlp + norms)


def selective_layer_act_bytes(m: ModelSpec, setup: TrainSetup) -> float:
    """One layer under selective recomputation: its input and the linear layers' outputs (Q, K, V, attention
    output, o_proj output, gate, up, down_proj output) plus the kernel's logsumexp."""
    s, b = setup.seq_len, setup.micro_batch
    h, hb = m.hidden_size or 0, _h_bytes(setup)
    inter = (m.intermediate_size or 0) if m.mlp == "gelu" else 2 * _mlp_width(m)
    return float(hb * s * b * h + 2 * s * b * (4 * h + 2 * _kv_dim(m) + inter)
                 + FLASH_LSE_BYTES * (m.num_heads or 0) * s * b)


def backward_transient_bytes(m: ModelSpec, setup: TrainSetup) -> float:
    """What one layer's backward allocates beyond what it keeps (the peak where the layers, not the loss, set it)."""
    if setup.fused_attention or m.kind != "decoder":
        return 0.0
    s, b = setup.seq_len, setup.micro_batch
    scale = _eager_score_bytes(m) / EAGER_SCORE_BYTES  # the gradients follow the dtype the scores are kept in
    return float(EAGER_BACKWARD_SCORE_BYTES * scale * (m.num_heads or 0) * s * s * b)


def checkpointed_layer_bytes(m: ModelSpec, setup: TrainSetup) -> float:
    """What one layer keeps under full checkpointing: its input."""
    return float(_h_bytes(setup) * setup.seq_len * setup.micro_batch * (m.hidden_size or 0))


def logits_bytes(m: ModelSpec, setup: TrainSetup) -> float:
    """The loss's peak over the vocabulary (decoders only)."""
    if m.kind != "decoder":
        return 0.0
    tokens = setup.seq_len * setup.micro_batch
    if setup.loss == "chunked":
        return float(FUSED_CE_BYTES * tokens * min(m.hidden_size or 0, m.vocab_size or 0))
    v, h = m.vocab_size or 0, m.hidden_size or 0
    per = LOGIT_BYTES_FP32_HEAD if setup.precision == "fp32" else LOGIT_BYTES
    out = float(tokens * v * (per + LOGIT_SOFTCAP_BYTES.get(m.family, 0)))
    if setup.method == "qlora" and setup.kbit_upcast and setup.precision != "fp32":
        # prepare_model_for_kbit_training's fp32 head under autocast: the logits come out bf16 all the same, and
        # the frozen weight is cast to bf16 for the forward and again for the backward's grad_input (autocast
        # caches only the casts of weights that train): 2 B x V x h at the peak (the qlora-kbit traces)
        out += 2.0 * v * h
    return out


def activation_gib(m: ModelSpec, setup: TrainSetup) -> float:
    """Peak stored activations of one micro-batch, logits included (GiB)."""
    if m.kind in ("cnn", "diffusion"):
        keep = CKPT_KEEP_NON_TRANSFORMER if setup.grad_ckpt else 1.0
        if m.kind == "diffusion":
            return setup.micro_batch * DIFFUSION_ACT_GIB * (0.25 if setup.grad_ckpt else 1.0)
        return setup.micro_batch * (m.gflops_per_sample or 0.0) * ACT_MIB_PER_GFLOP / 1024 * keep
    layers = m.num_layers or 0
    per_layer = decoder_layer_act_bytes(m, setup)
    s, b, h = setup.seq_len, setup.micro_batch, m.hidden_size or 0
    mode = setup.checkpointing
    logits = logits_bytes(m, setup)
    kept = layers * _h_bytes(setup) * s * b * h  # the layer inputs checkpointing keeps
    if setup.activation_offload:  # torchtune: saved tensors stream to CPU; one layer's stay while it computes
        stored = per_layer if mode == "none" else min(per_layer, kept + per_layer)
        return (stored + logits) / GIB
    bwd = backward_transient_bytes(m, setup)
    if mode == "full":
        # The loss's logits peak comes first in the backward and is freed before the last layer is recomputed:
        # the two transients do not meet (the traces' checkpointed steps peak at the layer inputs + the logits,
        # or, with small vocabularies and eager attention, at the recomputed layer's backward)
        return (kept + max(per_layer + bwd, logits)) / GIB
    if mode == "selective":  # every layer's kept outputs + the one whose core attention is recomputed
        return (layers * selective_layer_act_bytes(m, setup) + max(_score_bytes(m, setup) + bwd, logits)) / GIB
    return (layers * per_layer + max(logits, bwd)) / GIB
