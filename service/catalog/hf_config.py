"""A Hugging Face config.json read as ModelSpec fields: the language model's dimensions (a nested text_config /
llm_config as in Llama-4, Gemma-3, Qwen-VL and InternVL), its MoE, MLA, sliding-window and linear-attention layout,
the released weight dtype, and the vision tower's size counted from vision_config.

Pure: a dict in, a dict of fields and the notes of what was inferred out. `scripts/add_model.py` writes catalog
rows from it; `service/planner/resolve.py:model_from_hf_config` sizes a private model with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from service.errors import InvalidInputError

Config = dict[str, Any]

_TEXT_KEYS = ("text_config", "llm_config", "language_config")
_VISION_KEYS = ("vision_config", "visual", "vision_tower_config")
_OTHER_TOWERS = ("audio_config", "speech_config", "projector_config", "perceiver_config")
# model types whose query, key and value projections carry a bias without saying so in the config
_QKV_BIAS_TYPES = ("qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl", "qwen2_vl_text", "qwen2_5_vl_text")
# per-head q/k RMSNorm without a config flag (Qwen3 and its VL / Next / 3.5 builds, Gemma-3)
_QK_NORM_TYPES = ("qwen3", "gemma3")
# untied unless the config says so, except these (transformers' config class defaults to tied)
_TIED_BY_DEFAULT = ("gemma", "cohere", "falcon", "gpt_bigcode", "gpt2", "starcoder2")
_GATED_GELU = ("gemma",)
_GELU_TYPES = ("falcon", "gpt2", "gpt_bigcode")  # GELU MLPs whose configs name no activation
_PLAIN_ACTS = ("relu", "relu2", "quick_gelu")  # OPT's ReLU MLP, Nemotron's squared ReLU: not gated  # GELU MLPs that are still gated (GeGLU); other GELU decoders have fc1 -> fc2
# linear-attention families this schema does not describe (Kimi Delta Attention, Mamba layers)
_UNSUPPORTED = {"linear_attn_config": "Kimi linear attention (KDA)", "hybrid_override_pattern": "Mamba layers",
                "mamba_num_heads": "Mamba layers", "compress_ratios": "DeepSeek-V4 compressed attention",
                "global_head_dim": "separate global-attention head dims", "block_configs":
                "per-layer block shapes (DeciLM / Nemotron NAS)", "altup_num_inputs":
                "Gemma-3n AltUp and per-layer embeddings", "swa_num_key_value_heads":
                "separate sliding-window attention heads", "o_lora_rank": "a low-rank output projection"}


class ConfigUnsupported(InvalidInputError):
    """The config describes an architecture the catalog's schema cannot hold without guessing."""


@dataclass
class Converted:
    fields: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # what was inferred, for the row's source


def _first(cfg: Config, *keys: str) -> Any:
    for k in keys:
        if cfg.get(k) is not None:
            return cfg[k]
    return None


def split_config(cfg: Config) -> tuple[Config, Config | None]:
    """(the language model's config, the vision tower's): a nested text config inherits the top level's keys."""
    nested = (*_TEXT_KEYS, *_VISION_KEYS, *_OTHER_TOWERS)
    top = {k: v for k, v in cfg.items() if k not in nested}
    text = next((cfg[k] for k in _TEXT_KEYS if isinstance(cfg.get(k), dict)), None)
    merged = {**top, **text} if text else top
    if text and "quantization_config" in cfg and "quantization_config" not in text:
        merged["quantization_config"] = cfg["quantization_config"]
    vision = next((cfg[k] for k in _VISION_KEYS if isinstance(cfg.get(k), dict)), None)
    return merged, vision


def _model_type(t: Config) -> str:
    return str(t.get("model_type") or "custom")


def _unsupported(t: Config) -> None:
    for key, what in _UNSUPPORTED.items():
        if key in t:
            raise ConfigUnsupported(f"config has {key}: {what}, which the model schema does not describe.",
                                    "Leave the model out of the catalog, or size it from its parameter count.")


def _moe(t: Config, num_layers: int, notes: list[str]) -> dict[str, Any] | None:
    experts = _first(t, "num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts")
    if not experts:
        return None
    if isinstance(experts, list):  # ERNIE-4.5-VL: [text, vision] experts
        experts = experts[0]
    top_k = _first(t, "num_experts_per_tok", "moe_k", "moe_topk", "top_k_experts", "num_experts_per_token")
    if isinstance(top_k, list):
        top_k = top_k[0]
    if top_k is None:
        raise InvalidInputError("config has experts but no num_experts_per_tok.", "Pass a complete config.json.")
    mtype = _model_type(t)
    width = _first(t, "moe_intermediate_size", "expert_intermediate_size")
    if isinstance(width, list):
        width = width[0]
    if width is None:
        width = t.get("intermediate_size")
    out: dict[str, Any] = {"num_experts": int(experts), "top_k": int(top_k), "moe_intermediate_size": int(width)}
    shared_width = _first(t, "shared_expert_intermediate_size", "share_expert_dim")
    shared = _first(t, "n_shared_experts", "num_shared_experts", "moe_num_shared_experts", "num_shared_expert")
    if isinstance(shared, list):
        shared = shared[0]
    if mtype.startswith("llama4"):
        shared = 1  # Llama4TextMoe: one shared expert of intermediate_size beside the routed ones
        notes.append("Llama-4 shared expert per MoE layer (transformers Llama4TextMoe)")
    if shared_width and not shared:
        shared = 1
    if shared:
        out["shared_experts"] = int(shared)
    if shared_width and int(shared_width) != int(width) * int(shared or 1):
        out["shared_expert_intermediate_size"] = int(shared_width)
    first = _first(t, "first_k_dense_replace", "moe_layer_start_index")
    if isinstance(first, list):
        first = first[0]
    if first:
        out["first_k_dense"] = int(first)
    step = _first(t, "decoder_sparse_step", "interleave_moe_layer_step", "moe_layer_interval")
    freq = t.get("moe_layer_freq")
    dense = [int(i) for i in t.get("mlp_only_layers") or []]
    if isinstance(freq, list):  # one flag per layer (MiMo): 0 = dense
        dense += [i for i, v in enumerate(freq) if not v]
    elif step is None and isinstance(freq, int):
        step = freq
    if step and int(step) > 1:
        out["layer_step"] = int(step)
    dense = sorted(i for i in set(dense) if i >= out.get("first_k_dense", 0))
    if dense:
        out["dense_layers"] = dense
    end = t.get("moe_layer_end_index")
    if isinstance(end, int) and 0 <= end < num_layers - 1:
        out["dense_layers"] = sorted({*out.get("dense_layers", []), *range(end + 1, num_layers)})
    return out


def _mla(t: Config) -> dict[str, Any] | None:
    if not t.get("kv_lora_rank"):
        return None
    out = {"q_lora_rank": t.get("q_lora_rank") or 0, "kv_lora_rank": t["kv_lora_rank"],
           "qk_nope_head_dim": t["qk_nope_head_dim"], "qk_rope_head_dim": t["qk_rope_head_dim"],
           "v_head_dim": t["v_head_dim"]}
    if t.get("index_n_heads") and t.get("index_head_dim"):
        out |= {"index_n_heads": t["index_n_heads"], "index_head_dim": t["index_head_dim"]}
    return out


def _layer_kinds(t: Config, num_layers: int) -> list[str] | None:
    types = t.get("layer_types")
    if isinstance(types, list) and types:
        return [str(x) for x in types][:num_layers]
    attn = t.get("attn_type_list")  # MiniMax-01: 0 lightning (linear), 1 softmax
    if isinstance(attn, list) and attn:
        return ["full_attention" if x else "linear_attention" for x in attn][:num_layers]
    interval = t.get("full_attention_interval")
    if interval and "linear_num_value_heads" in t:
        return ["full_attention" if (i + 1) % int(interval) == 0 else "linear_attention" for i in range(num_layers)]
    return None


def _windows(t: Config, kinds: list[str] | None, num_layers: int, notes: list[str]) -> dict[str, Any]:
    window = t.get("sliding_window")
    if not window or t.get("use_sliding_window") is False:
        return {}
    max_pos = t.get("max_position_embeddings")
    if max_pos and int(window) >= int(max_pos):
        return {}  # a window as long as the context changes nothing
    mtype = _model_type(t)
    if kinds is not None:
        layers = sum(1 for k in kinds if k == "sliding_attention")
    elif t.get("sliding_window_pattern"):  # Gemma-3, Cohere2: every n-th layer is global
        n = int(t["sliding_window_pattern"])
        layers = sum(1 for i in range(num_layers) if (i + 1) % n)
    elif mtype.startswith("gemma2"):
        layers = num_layers // 2  # Gemma-2 alternates local and global layers
        notes.append("Gemma-2 alternates sliding-window and global layers")
    else:
        return {"sliding_window": int(window)}  # every layer (Mistral-7B-v0.1, Phi-3)
    return {"sliding_window": int(window), "sliding_window_layers": layers} if layers else {}


def _linear_attn(t: Config, kinds: list[str] | None, heads: int, hd: int) -> dict[str, Any] | None:
    if kinds is None or "linear_attention" not in kinds:
        return None
    layers = sum(1 for k in kinds if k == "linear_attention")
    if "linear_num_value_heads" in t:  # gated DeltaNet (Qwen3-Next, Qwen3.5)
        return {"kind": "gated_deltanet", "layers": layers, "num_key_heads": t["linear_num_key_heads"],
                "num_value_heads": t["linear_num_value_heads"], "key_head_dim": t["linear_key_head_dim"],
                "value_head_dim": t["linear_value_head_dim"], "conv_kernel": t.get("linear_conv_kernel_dim") or 0}
    # lightning attention (MiniMax-01 / M1): the softmax layers' heads, no GQA
    return {"kind": "lightning", "layers": layers, "num_key_heads": heads, "num_value_heads": heads,
            "key_head_dim": hd, "value_head_dim": hd}


def released_dtype(cfg: Config) -> str | None:
    """The dtype a quantization_config says the weights ship in: fp8, int4, mxfp4; None for 16-bit."""
    q = cfg.get("quantization_config")
    if not isinstance(q, dict):
        return None
    method = str(q.get("quant_method") or "").lower()
    fmt = str(q.get("fmt") or q.get("format") or "").lower()
    if method == "mxfp4" or "mxfp4" in fmt:
        return "mxfp4"
    if method == "fp8" or "float8" in fmt or "fp8" in fmt:
        return "fp8"
    bits = q.get("bits") or q.get("w_bit")
    groups = q.get("config_groups")
    kind = "int"
    group_size = q.get("group_size")
    if bits is None and isinstance(groups, dict):
        group: Config = next(iter(groups.values()), {})
        weights: Config = group.get("weights") or {}
        bits, kind, group_size = weights.get("num_bits"), str(weights.get("type") or "int"), weights.get("group_size")
    if kind == "float" and bits == 8:
        return "fp8"
    if kind == "float" and bits == 4 and group_size == 32:
        return "mxfp4"  # e2m1 in groups of 32 (MXFP4)
    if kind != "float" and bits == 4:
        return "int4"
    raise ConfigUnsupported(f"quantization_config {method or fmt or q} is not a weight dtype the catalog holds "
                            "(bf16, fp8, int4, mxfp4).", "Convert the 16-bit release's config instead.")


def vision_params(v: Config, text_hidden: int) -> float:
    """A ViT tower's parameters from its config: blocks (attention 4h^2 + MLP, biases and norms), the patch
    embedding and a projector to the language model's width. An estimate: projector layouts differ by family."""
    h = int(_first(v, "hidden_size", "embed_dim", "width") or 0)
    if "embed_dim" in v and v.get("hidden_size") and v["hidden_size"] != v["embed_dim"]:
        h = int(v["embed_dim"])  # Qwen2-VL: hidden_size is the LLM's width, embed_dim the ViT's
    depth = int(_first(v, "depth", "num_hidden_layers", "num_layers", "layers") or 0)
    if not h or not depth:
        return 0.0
    inter = int(_first(v, "intermediate_size", "ffn_hidden_size") or h * float(v.get("mlp_ratio") or 4))
    act = str(_first(v, "hidden_act", "hidden_activation") or "gelu").lower()
    gated = act in ("silu", "swiglu")
    mlp = (3 if gated else 2) * h * inter + inter + h
    block = 4 * h * h + 4 * h + mlp + 4 * h
    patch = int(v.get("patch_size") or 14)
    temporal = int(v.get("temporal_patch_size") or 1)
    channels = int(v.get("num_channels") or v.get("in_channels") or v.get("in_chans") or 3)
    embed = channels * temporal * patch * patch * h
    merge = int(v.get("spatial_merge_size") or 1)
    out = int(_first(v, "out_hidden_size", "projection_dim") or text_hidden)
    projector = (h * merge * merge) ** 2 + h * merge * merge * out if merge > 1 else h * out
    return float(depth * block + embed + projector)


def convert(cfg: Config) -> Converted:
    """ModelSpec fields (no id, name, family, source or counts) from a config.json."""
    t, vision = split_config(cfg)
    _unsupported(t)
    notes: list[str] = []
    mtype = _model_type(t)
    layers = _first(t, "num_hidden_layers", "num_layers", "n_layer", "n_layers")
    hidden = _first(t, "hidden_size", "n_embd", "d_model", "dim")
    heads = _first(t, "num_attention_heads", "n_head", "num_heads", "n_heads")
    missing = [name for name, v in (("num_hidden_layers", layers), ("hidden_size", hidden),
                                    ("num_attention_heads", heads)) if v is None]
    if missing:
        raise InvalidInputError(f"config lacks {', '.join(missing)}.", "Use a decoder config.json from the model repo.")
    layers, hidden, heads = int(layers), int(hidden), int(heads)
    kv = _first(t, "num_key_value_heads", "num_kv_heads", "n_head_kv", "num_query_groups")
    if kv is None and t.get("multi_query_group_num") and t.get("multi_query_attention", True):
        kv = t["multi_query_group_num"]  # ChatGLM / GLM-4 (THUDM format)
    if kv is None and t.get("multi_query"):
        kv = 1  # Falcon-7B
    act = str(_first(t, "hidden_act", "hidden_activation", "activation_function", "afn")
              or ("gelu" if mtype in _GELU_TYPES else "silu")).lower()
    plain = act.startswith("gelu") or act in _PLAIN_ACTS  # two matrices (fc1 -> act -> fc2), unless a gated family
    mlp = "gelu" if plain and not mtype.startswith(_GATED_GELU) else "swiglu"
    inter = _first(t, "intermediate_size_mlp", "intermediate_size", "ffn_hidden_size", "n_inner", "dff")
    if isinstance(inter, list):
        inter = inter[0]
    if inter is None and mlp == "gelu":
        inter = 4 * hidden
        notes.append("intermediate_size 4 x hidden (GELU MLP, not in the config)")
    moe = _moe(t, layers, notes)
    if inter is None and moe is not None and moe.get("first_k_dense", 0) == 0 and moe.get("layer_step", 1) == 1 \
            and not moe.get("dense_layers"):
        inter = moe["moe_intermediate_size"]  # no dense MLP anywhere: the field is unused
        notes.append("no dense MLP layer: intermediate_size set to the expert width (unused)")
    if inter is None:
        raise InvalidInputError("config lacks intermediate_size.", "Use a decoder config.json from the model repo.")
    vocab = _first(t, "vocab_size", "padded_vocab_size")
    if vocab is None:
        raise InvalidInputError("config lacks vocab_size.", "Use a decoder config.json from the model repo.")
    mla = _mla(t)
    hd = _first(t, "head_dim", "kv_channels")
    head_dim = int(hd) if hd and not mla and int(hd) != hidden // heads else None
    tied = t.get("tie_word_embeddings")
    if tied is None:
        tied = cfg.get("tie_word_embeddings")
    if tied is None:
        tied = mtype.startswith(_TIED_BY_DEFAULT)
        notes.append(f"tie_word_embeddings not in the config: {str(tied).lower()} (the {mtype} default)")
    bias = _first(t, "attention_bias", "qkv_bias", "add_qkv_bias", "use_qkv_bias", "bias")
    if bias is None:
        bias = mtype in _QKV_BIAS_TYPES
    qk_norm = _first(t, "use_qk_norm", "qk_layernorm", "use_qk_layernorm")
    if qk_norm is None:
        qk_norm = mtype.startswith(_QK_NORM_TYPES)
    max_pos = _first(t, "max_position_embeddings", "seq_length", "n_positions", "max_sequence_length")
    if max_pos is None and mtype == "falcon":
        max_pos = 2048
        notes.append("max_position_embeddings not in the config: 2048 (transformers FalconConfig default)")
    kinds = _layer_kinds(t, layers)
    if t.get("cross_attention_layers"):
        notes.append(f"{len(t['cross_attention_layers'])} image cross-attention layers counted as self-attention "
                     "(their KV is the image's, so the per-token KV is overstated)")
    fields: dict[str, Any] = {
        "kind": "decoder", "num_layers": layers, "hidden_size": hidden, "num_heads": heads,
        "num_kv_heads": int(kv) if kv is not None else heads, "head_dim": head_dim, "intermediate_size": int(inter),
        "vocab_size": int(vocab),
        "max_position_embeddings": max_pos,
        "tie_word_embeddings": bool(tied), "qkv_bias": bool(bias) and mla is None, "qk_norm": bool(qk_norm),
        "mlp": mlp, "moe": moe, "mla": mla,
        "linear_attn": _linear_attn(t, kinds, heads, head_dim or hidden // heads),
        "attn_output_gate": bool(t.get("attn_output_gate", mtype.startswith("qwen3_next"))),
        **_windows(t, kinds, layers, notes),
    }
    dtype = released_dtype(t)
    if dtype:
        fields["released_dtype"] = dtype
    if vision:
        vp = vision_params(vision, hidden)
        if vp:
            fields["vision_params_b"] = round(vp / 1e9, 3) or round(vp / 1e9, 6)
            notes.append("vision tower params calc from vision_config (approx.)")
    return Converted({k: v for k, v in fields.items() if v is not None}, notes)
