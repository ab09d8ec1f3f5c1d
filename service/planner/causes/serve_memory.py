"""Causes of a server's memory: what it holds (memory seen far above the model), why it OOMs or will not start.
Each a pure function of the `ServeRun`, the GiB it explains per GPU from the serving engine
(service/sizing/serving: engines.py, layout.py, support.py, kv.py), and the flag that fixes it.

    reservation       the engine takes its share of the card (vLLM gpu_memory_utilization x the card, SGLang
                      mem_fraction_static, LMDeploy cache_max_entry_count of what is free) whatever the model's
                      size, the KV pool pre-allocated in it: the memory seen is not the model
    startup_profile   the start-up profile: max_num_seqs x max_model_len (its batched tokens), the sampler's logits
                      and the multimodal dummy inputs, set aside before the pool
    other_processes   other processes already on the card (the pasted CUDA error's figures)
    tp_layout         a tensor-parallel degree that does not divide the heads or the quantised shapes
    weights_exceed    the weights alone exceed the cards
    kv_short          the pool left holds less than one sequence of max_model_len (models without GQA, long
                      contexts)
    kernel_support    AWQ / GPTQ / FP8 kernels the card's compute capability does not have
    graphs            CUDA-graph capture after the pool is sized
    no_mla            DeepSeek-V2/V3 served by an engine without MLA's latent cache: full K and V per head
"""

from __future__ import annotations

import math

from service.planner.causes.cases import ServeRun
from service.planner.causes.train_memory import MIN_GIB, other_gib
from service.planner.causes.types import Cause, Fix, Quantity
from service.sizing.serving import layout
from service.sizing.serving.device import context_gib, cuda_total_gib
from service.sizing.serving.kv import attention_kind, estimate_kv
from service.sizing.serving.support import capability, unsupported
from service.sizing.serving.types import GIB

SIZED = frozenset({"vllm", "sglang", "lmdeploy", "trtllm"})
UNSIZED = frozenset({"hf", "transformers", "ollama", "llamacpp", "ktransformers"})  # no pool, no profile, no TP


def _sized(run: ServeRun) -> bool:
    """The engine as named reserves a share and sizes a pool (TGI, MindIE, Xinference are sized as vLLM)."""
    return run.engine not in UNSIZED
NO_MLA_ENGINES = frozenset({"tgi", "hf", "transformers", "mindie", "xinference"})
SMALL_SEQS = 32  # a lowered --max-num-seqs
STEP = 0.05  # a suggested memory share is rounded up to this
FLAG = {"vllm": "--gpu-memory-utilization", "sglang": "--mem-fraction-static", "lmdeploy": "--cache-max-entry-count",
        "trtllm": "free_gpu_memory_fraction"}
BLOCKING = frozenset({"tp_heads", "tp_kv_heads", "quant_group", "fp8_block", "pp_layers", "kernel_support",
                      "weights_exceed"})


def _gib(x: float) -> Quantity:
    return Quantity.of(x, "GiB", 1)


def held_gib(run: ServeRun) -> float:
    """What the engine holds on each GPU once started: weights, the profiled peak, the pool, graphs, context."""
    m = run.mem
    return m.weights_gib + m.activation_peak_gib + m.other_gib + m.kv_cache_gib + m.graph_gib


def reservation(run: ServeRun) -> Cause:
    if not _sized(run) or not run.mem.starts:
        return Cause.no("reservation")
    m = run.mem
    held = held_gib(run)
    beyond = held - m.weights_gib
    if beyond < MIN_GIB:
        return Cause.no("reservation")
    total = cuda_total_gib(run.gpu)
    one_seq = m.kv_cache_gib * min(1.0, 8192 / max(1, m.kv_capacity_tokens)) if m.kv_capacity_tokens else 0.0
    want = (m.weights_gib + m.activation_peak_gib + m.other_gib + m.graph_gib + one_seq + 1.0) / total
    lower = min(m.mem_fraction, math.ceil(want / STEP) * STEP)
    flag = FLAG[run.setup.engine]
    fix = Fix(code="lower_share", setting=f"{flag} {lower:.2f}", fixed=_gib(lower * total)) \
        if lower < m.mem_fraction - 1e-6 else None
    return Cause(code="reservation", explains=_gib(beyond), stated=run.is_stated("engine"), fix=fix,
                 detail={"share": m.mem_fraction, "held_gib": round(held, 1), "weights_gib": round(m.weights_gib, 1),
                         "kv_gib": round(m.kv_cache_gib, 1), "card_gib": run.card_gib,
                         "tokens": m.kv_capacity_tokens})


def startup_profile(run: ServeRun) -> Cause:
    if not _sized(run):
        return Cause.no("startup_profile")
    m = run.mem
    act = m.activation_peak_gib
    if act < max(1.0, 0.03 * run.card_gib):
        return Cause.no("startup_profile")
    seqs = run.setup.max_num_seqs
    smaller = run.mem_with(max_num_seqs=SMALL_SEQS, max_num_batched_tokens=min(
        run.setup.max_num_batched_tokens or 8192, 8192))
    code = "mm_profile" if m.vision_gib >= 0.5 * act else "startup_profile"
    setting = "--limit-mm-per-prompt image=1 --max-num-seqs 32" if code == "mm_profile" else "--max-num-seqs 32"
    return Cause(code=code, explains=_gib(act), stated=run.is_stated("max_num_seqs") or run.is_stated("max_model_len"),
                 fix=Fix(code="fewer_seqs", setting=setting, fixed=_gib(smaller.activation_peak_gib)),
                 detail={"seqs": seqs or 0, "max_len": m.max_model_len, "vision_gib": round(m.vision_gib, 1),
                         "sampler_gib": round(m.sampler_gib, 1)})


def other_processes(run: ServeRun) -> Cause:
    s = run.seen
    other = other_gib(s.card_gb, s.free_gb, s.process_gb, s.other_gb)
    if other is None or other < MIN_GIB:
        return Cause.no("other_processes")
    return Cause(code="other_processes", explains=_gib(other), fix=Fix(code="free_card", setting="CUDA_VISIBLE_DEVICES"),
                 detail={"card_gib": s.card_gb or run.card_gib, "share": run.mem.mem_fraction})


def tp_layout(run: ServeRun) -> Cause:
    if not _sized(run):
        return Cause.no("tp_layout")
    found = layout.with_fixes(run.model, run.setup.engine, run.setup.weights, run.setup.tp, run.setup.pp)
    if not found:
        return Cause.no("tp_layout")
    p = found[0]
    return Cause(code=p.code, explains=None,
                 fix=Fix(code="layout", setting=p.fix or None),
                 detail={"tp": run.setup.tp, "heads": run.model.num_heads or 0, "kv_heads": run.model.num_kv_heads or 0})


def weights_exceed(run: ServeRun) -> Cause:
    m = run.mem
    usable = cuda_total_gib(run.gpu) - context_gib(run.setup.gpus)
    if not _sized(run) or m.weights_gib < usable:
        return Cause.no("weights_exceed")
    fix = Fix(code="more_gpus", setting=m.fix or None)
    return Cause(code="weights_exceed", explains=_gib(m.weights_gib - usable), fix=fix,
                 detail={"weights_gib": round(m.weights_gib, 1), "usable_gib": round(usable, 1),
                         "gpus": run.setup.gpus, "total_gib": round(m.weights_gib * run.setup.gpus, 1)})


def kv_short(run: ServeRun) -> Cause:
    m = run.mem
    if not _sized(run) or m.weights_gib >= cuda_total_gib(run.gpu) or m.max_model_len_fits >= m.max_model_len:
        return Cause.no("kv_short")
    kv = estimate_kv(run.model, run.setup.kv_dtype, run.setup.tp)
    per_token_kib = kv.bytes_per_token_per_gpu / 1024
    need = m.max_model_len * kv.bytes_per_token_per_gpu / GIB
    fits = m.max_model_len_fits
    shorter = 1 << (fits.bit_length() - 1) if fits >= 1024 else fits
    fix = Fix(code="max_model_len", setting=f"--max-model-len {shorter}" if shorter > 0 else (m.fix or None),
              fixed=Quantity.of(shorter, "tokens", 0) if shorter > 0 else None)
    return Cause(code="kv_short", explains=_gib(max(0.0, need - m.kv_cache_gib)), stated=run.is_stated("max_model_len"),
                 fix=fix, detail={"max_len": m.max_model_len, "fits": fits, "kv_kib": round(per_token_kib, 1),
                                  "pool_gib": round(m.kv_cache_gib, 2),
                                  "no_gqa": 1.0 if attention_kind(run.model) == "mha" else 0.0, **_wider(run)})


TIGHT_POOL = 0.1  # a KV pool under this share of what the engine takes: the weights fill the cards


def _wider(run: ServeRun) -> dict[str, float]:
    """When the weights leave the pool almost nothing (a shorter context serves one request at a time), the wider
    tensor-parallel layout that gives the cache room: its degree, its pool per GPU and the tokens it holds."""
    m = run.mem
    if m.kv_cache_gib >= TIGHT_POOL * m.mem_fraction * cuda_total_gib(run.gpu):
        return {}
    tp = run.setup.tp * 2
    heads, kv_heads = run.model.num_heads or 0, run.model.num_kv_heads or run.model.num_heads or 0
    if tp > 8 or not heads or heads % tp or (kv_heads >= tp and kv_heads % tp):
        return {}
    wide = run.mem_with(tp=tp)
    if not wide.starts:
        return {}
    return {"wide_tp": float(tp), "wide_gpus": float(tp * run.setup.pp), "wide_pool_gib": round(wide.kv_cache_gib, 1),
            "wide_tokens": float(wide.kv_capacity_tokens),
            "wide_seqs": round(wide.max_concurrency, 1)}


def kernel_support(run: ServeRun) -> Cause:
    if not _sized(run):
        return Cause.no("kernel_support")
    why = unsupported(run.setup.engine, run.gpu, run.setup.weights, run.setup.kv_dtype)
    if why is None:
        return Cause.no("kernel_support")
    major, minor = capability(run.gpu)
    return Cause(code="kernel_support", explains=None, fix=Fix(code="dtype_or_card", setting=None),
                 detail={"cc": major + minor / 10})


def graphs(run: ServeRun) -> Cause:
    m = run.mem
    if run.setup.engine != "vllm" or not m.graph_capture_fails:
        return Cause.no("graphs")
    return Cause(code="graphs", explains=_gib(m.graph_gib - max(0.0, m.graph_room_gib)),
                 fix=Fix(code="enforce_eager", setting="--enforce-eager"),
                 detail={"graph_gib": round(m.graph_gib, 1)})


def no_mla(run: ServeRun) -> Cause:
    if run.model.mla is None or run.engine not in NO_MLA_ENGINES:
        return Cause.no("no_mla")
    latent = estimate_kv(run.model, "auto", run.setup.tp).bytes_per_token_per_gpu
    full = estimate_kv(run.model, "auto", run.setup.tp, mla_latent=False).bytes_per_token_per_gpu
    return Cause(code="no_mla", explains=Quantity.of(full / latent, "x", 1),
                 fix=Fix(code="mla_engine", setting="vLLM >= 0.7.1 / SGLang (MLA)"),
                 detail={"latent_kib": round(latent / 1024, 1), "full_kib": round(full / 1024, 1)})


def runtime_headroom(run: ServeRun) -> Cause:
    """It started and ran out later: the engine gave the pool its share up front, and what is left outside it is
    all a long prompt's prefill (and the sampler) can use."""
    m = run.mem
    if not _sized(run) or not m.starts or run.seen.where != "inference":
        return Cause.no("runtime_headroom")
    total = cuda_total_gib(run.gpu)
    left = max(0.0, total - held_gib(run))
    lower = max(0.3, round(m.mem_fraction - (0.3 if run.setup.engine == "lmdeploy" else 0.05), 2))
    return Cause(code="runtime_headroom", explains=_gib(left),
                 fix=Fix(code="lower_share", setting=f"{FLAG[run.setup.engine]} {lower:g}",
                         fixed=_gib(left + (m.mem_fraction - lower) * total)),
                 detail={"share": m.mem_fraction, "card_gib": run.card_gib})


OOM_CAUSES = (weights_exceed, tp_layout, kernel_support, other_processes, kv_short, graphs, startup_profile, no_mla,
              runtime_headroom, reservation)
MEMORY_CAUSES = (reservation, other_processes, startup_profile, no_mla)
