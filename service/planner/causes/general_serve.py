"""The causes that need no size of a server's run (service/planner/causes/general.py ranks them): TP over PCIe,
several cards without tensor parallelism, Ollama's context, the engine's reservation, llama.cpp's offloaded
layers, quantized weights without their kernel, one engine slower than another, bandwidth-bound decode."""

from __future__ import annotations

from service.planner.causes.general_signs import MEMORY, NODE_GPUS, Found, Signs, cause_of


def tp_scaling(s: Signs) -> Found | None:
    tps = {x.knobs.tp for x in (s.asked, *s.others) if x.knobs.tp}
    if s.serving and (s.kind == "scaling" or (s.kind == "slow" and len(tps) > 1)):
        return Found(cause_of("tp_scaling", "replicas_serve", "--tensor-parallel-size 1"), True)
    return None


def reservation(s: Signs) -> Found | None:
    eng = s.engine or "vllm"
    o = s.asked.outcome
    card = s.gpu.memory_gib if s.gpu is not None else s.asked.hardware.gpu_memory_gb
    seen = o.memory_gb if o is not None else None
    low = seen is not None and card is not None and seen < 0.5 * card
    if not s.serving or s.kind not in MEMORY:
        return None
    if eng == "ollama" and s.kind == "memory" and low:
        return Found(cause_of("ollama_fit", "ollama_fit", "OLLAMA_NUM_CTX"), True)
    if eng == "lmdeploy":
        return Found(cause_of("lmdeploy_cache", "lmdeploy_cache", "--cache-max-entry-count 0.5"), True)
    if s.kind == "memory" and not low and eng in ("vllm", "sglang", "xinference"):
        flag = "--mem-fraction-static 0.5" if eng == "sglang" else "--gpu-memory-utilization 0.5"
        return Found(cause_of("reservation", "reservation", flag), True)
    return None


QUANTIZED = frozenset({"int4", "int8", "awq", "gptq"})


def quant_kernel(s: Signs) -> Found | None:
    """Quantized weights slow: they are fast only with a fused kernel (Marlin, the AutoGPTQ CUDA extension)."""
    engines = {x.knobs.engine for x in (s.asked, *s.others) if x.knobs.engine}
    plain = s.asked.knobs.engine in (None, "hf", "transformers", "xinference") or len(engines) > 1
    if s.serving and s.kind == "slow" and (s.asked.knobs.weights or "") in QUANTIZED and plain:
        return Found(cause_of("quant_kernel", "quant_kernel", "--quantization awq_marlin"), None)
    return None


def one_card(s: Signs) -> Found | None:
    """Several cards, no tensor parallelism: the model loads on one card, or device_map fills the first."""
    k = s.asked.knobs
    if (s.serving and s.kind in MEMORY and s.gpus() > 1 and not k.tp and not k.pp
            and k.engine not in ("ollama", "llamacpp")):
        return Found(cause_of("one_card", "one_card", f"--tensor-parallel-size {s.gpus()}", cards=float(s.gpus())),
                      False)
    return None


def ollama_ctx(s: Signs) -> Found | None:
    ctx = s.asked.knobs.max_model_len
    if s.serving and s.engine == "ollama" and s.kind in ("slow", "oom", "util") and ctx:
        return Found(cause_of("ollama_ctx", "ollama_ctx", "num_ctx", ctx=float(ctx)), True)
    return None


def llamacpp_layers(s: Signs) -> Found | None:
    if s.serving and s.engine == "llamacpp" and s.kind in ("slow", "util", "oom"):
        return Found(cause_of("llamacpp_layers", "llamacpp_layers", "-ngl 99"), None)
    return None


def multinode_tp(s: Signs) -> Found | None:
    """A server split over several machines: tensor parallelism all-reduces every layer over their network."""
    hw = s.asked.hardware
    if s.serving and s.kind in ("slow", "util") and ((hw.nodes or 1) > 1 or s.gpus() > NODE_GPUS):
        return Found(cause_of("multinode_tp", "multinode_tp"), None)
    return None


def engine_gap(s: Signs) -> Found | None:
    engines = {x.knobs.engine for x in (s.asked, *s.others) if x.knobs.engine}
    if s.serving and s.kind == "slow" and len(engines) > 1:
        return Found(cause_of("engine_gap"), False)
    return None


def serve_bandwidth(s: Signs) -> Found | None:
    if s.serving and s.kind == "slow":
        return Found(cause_of("decode_bound", "batching"), None)
    return None


# The order is the ranking: a cause the stated setup decides comes before one that only may apply.
