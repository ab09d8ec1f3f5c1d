"""A serving workload resolved against the catalog, and the engine's sizing on one GPU type as the contract's
`ServingSizing`. Sizings are cached per (model, GPU, workload, GPUs per node): a plan asks once per GPU type
and node size, whichever clouds sell it."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from service.catalog.queries import parse_param_count, weights_from_name
from service.catalog.schema import GpuSpec, ModelSpec
from service.errors import InvalidInputError
from service.planner.generic import generic_decoder
from service.planner.resolve import model_from_hf_config, resolve_named
from service.planner.serving_types import ServingSizing
from service.serving_workload import ServingWorkload
from service.sizing.serving import layout
from service.sizing.serving.device import runtime
from service.sizing.serving.engines import default_context, kv_layout
from service.sizing.serving.sizing import DeploymentSize, Refusal, ServingTarget, size_deployment
from service.sizing.serving.support import served_weights
from service.sizing.serving.types import ServingSetup
from service.sizing.serving.versions import engine_label

Notes = list[tuple[str, str]]
_CACHE: dict[tuple[object, ...], tuple[ModelSpec, ServingSizing | str]] = {}
_CACHE_MAX = 2048


def resolve_serving_model(w: ServingWorkload, models: tuple[ModelSpec, ...]) -> tuple[ModelSpec, Notes]:
    """The architecture to serve: a catalog model, a config.json path, or a generic decoder of `params_b`."""
    notes: Notes = []
    if w.model and w.model.endswith(".json") and Path(w.model).is_file():
        spec = model_from_hf_config(Path(w.model))
        notes.append((f"Sized from {w.model}.", f"按 {w.model} 的配置估算。"))
    elif w.model and parse_param_count(w.model) is None:
        spec, said = resolve_named(w.model, models)
        notes += said
    else:
        size = parse_param_count(w.model) if w.model else w.params_b
        assert size is not None  # the workload validator guarantees model or params_b
        spec = generic_decoder(size, models)
        like = spec.source.split(" of ")[-1]
        notes.append((f"No model name given: sized a {size:g}B decoder with the layout of {like}.",
                      f"未给出模型名：按 {like} 的结构估算 {size:g}B 参数的解码器模型。"))
    if spec.kind != "decoder":
        raise InvalidInputError(f"{spec.name} is not a generative LLM ({spec.kind}): serving sizing covers decoder "
                                "models behind vLLM, SGLang, TensorRT-LLM or LMDeploy.",
                                "Give a decoder model such as Qwen2.5-14B, or plan its training with `plan`.",
                                message_zh=f"{spec.name} 不是生成式大语言模型（{spec.kind}）：推理部署的估算只覆盖用 vLLM、"
                                "SGLang、TensorRT-LLM 或 LMDeploy 部署的 decoder 模型。",
                                fix_zh="请换一个 decoder 模型（如 Qwen2.5-14B），或用 `plan` 规划它的训练。")
    return spec, notes


def released_weights(w: ServingWorkload, m: ModelSpec) -> tuple[ServingWorkload, Notes]:
    """Weights not stated: the dtype the name's release is in ('-AWQ', '-GPTQ-Int8', '-FP8'), else the dtype the
    model ships in (DeepSeek-R1's FP8 checkpoint is what people serve)."""
    if w.weights is not None:
        return w, []
    named = weights_from_name(w.model) if w.model and not w.model.endswith(".json") else None
    if named is not None:
        return w.model_copy(update={"weights": named}), [
            (f"'{w.model}' is a {named.upper()} release: sized on {named} weights (give the weights to size another).",
             f"“{w.model}”是 {named.upper()} 量化版本：按 {named} 权重估算（如需其他精度请说明）。")]
    dtype = m.released_dtype
    if dtype == "bf16":
        return w.model_copy(update={"weights": dtype}), []
    return w.model_copy(update={"weights": dtype}), [
        (f"{m.name} ships {dtype.upper()} weights: sized on them (ask for bf16 to size a BF16 copy).",
         f"{m.name} 官方发布的就是 {dtype.upper()} 权重：按此估算（要按 BF16 副本估算请说明）。")]


def context_note(full: int, launched: int) -> tuple[str, str]:
    return (f"The KV pool does not hold the model's full context ({full:,} tokens): launched with --max-model-len "
            f"{launched:,}, the longest it holds; the figures are at that limit.",
            f"KV 缓存装不下模型的完整上下文（{full:,} tokens）：按 --max-model-len {launched:,}（能装下的最长值）启动，"
            "以上数字按此上限计算。")


LARGE_GPUS = 64  # above this many GPUs for a chat load the answer says what drove the count before it states it
MIN_LOAD_CONTEXT = 4096  # a plan's context is what its requests need, rounded up to a power of two, at least this


def load_context(inp: int, out: int, m: ModelSpec) -> int:
    """The --max-model-len a plan launches with when none is asked: input + output rounded up to a power of two
    (at least 4k), never above the model's context."""
    need = max(MIN_LOAD_CONTEXT, inp + out)
    return min(1 << (need - 1).bit_length(), max(default_context(m), inp + out))


def setup_and_target(w: ServingWorkload, m: ModelSpec, for_plan: bool = False) -> tuple[ServingSetup, ServingTarget,
                                                                                          Notes]:
    """Engine setup and target load, every default stated. `for_plan`: the context defaults to what the
    requests need, not the model's maximum (a plan sizes what to launch, not what `vllm serve` does unasked)."""
    notes: Notes = []
    inp, out = w.lengths
    if w.input_tokens is None or w.output_tokens is None:
        notes.append((f"Request lengths assumed {inp} prompt + {out} output tokens; give input/output tokens for "
                      "your traffic.", f"请求长度假设为输入 {inp} + 输出 {out} tokens，可按实际流量提供。"))
    max_len = w.max_model_len or default_context(m)
    if w.max_model_len is None and for_plan:
        max_len = load_context(inp, out, m)
        notes.append((f"max_model_len {max_len:,}: what these requests need ({inp} + {out} tokens, rounded up), not "
                      f"the model's {default_context(m):,}; ask for a longer context to size one.",
                      f"max_model_len 取 {max_len:,}：按请求所需（输入 {inp} + 输出 {out}，向上取整），而非模型的 "
                      f"{default_context(m):,} 上限；需要更长上下文请说明。"))
    elif w.max_model_len is None:
        if inp + out > max_len:
            max_len = inp + out
            notes.append((f"max_model_len raised to the request length, {max_len}.",
                          f"max_model_len 提高到请求长度 {max_len}。"))
        else:
            notes.append((f"max_model_len {max_len:,} (the model's context): shorter limits fit more "
                          "sequences and small GPUs.", f"max_model_len 取模型上下文 {max_len:,}；设得更短可容纳更多"
                          "并发，也更容易在小显存 GPU 上启动。"))
    if w.concurrency is None and w.request_rate is None:
        notes.append(("No load given: one replica, sized to start, with the concurrency it holds.",
                      "未给出负载：按能启动的最少 GPU 部署单副本，并给出其可承载的并发。"))
    tp, pp = layout.default_layout(w.gpus) if w.gpus else (1, 1)
    setup = ServingSetup(engine=w.engine, weights=w.weights or m.released_dtype, kv_dtype=w.kv_dtype, tp=tp, pp=pp,
                         mem_fraction=w.mem_fraction, max_model_len=max_len)
    return setup, ServingTarget(inp, out, w.concurrency, w.request_rate, w.ttft_ms, w.tpot_ms), notes


def fp16_note(gpu: GpuSpec) -> tuple[str, str]:
    """A GPU without BF16 serves BF16 weights as FP16 (service/sizing/serving/support.py served_weights)."""
    return (f"{gpu.name} has no BF16: the weights are served as FP16 (--dtype float16), the same memory.",
            f"{gpu.name} 不支持 BF16：权重按 FP16 加载（--dtype float16），显存占用相同。")


def engine_notes(w: ServingWorkload, gpu: GpuSpec) -> tuple[str, str]:
    """The release an answer's figures assume (every serving answer names it)."""
    return engine_label(w.engine, None, runtime(gpu))


def _key(w: ServingWorkload) -> tuple[object, ...]:
    return (w.gpus, w.weights, w.kv_dtype, w.engine, w.mem_fraction, w.max_model_len, w.input_tokens,
            w.output_tokens, w.concurrency, w.request_rate, w.ttft_ms, w.tpot_ms)


def size_on(m: ModelSpec, gpu: GpuSpec, w: ServingWorkload, max_gpus_per_replica: int,
            for_plan: bool = False) -> ServingSizing | str:
    """The engine's sizing of `w` on `gpu` with at most `max_gpus_per_replica` GPUs per replica (cached). A pinned
    `gpus` is one deployment on exactly those GPUs (TP inside a node, nodes as pipeline stages); a layout the
    engine refuses (TP6 for 64 heads) is replaced by the widest one it accepts on the same GPUs, and said."""
    key = (id(m), gpu.id, max_gpus_per_replica, for_plan, _key(w))
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is m:
        return hit[1]
    setup, target, _ = setup_and_target(w, m, for_plan)
    setup = replace(setup, weights=served_weights(gpu, setup.weights))  # BF16 is FP16 on a V100 or T4
    refused = None
    if w.gpus is not None and (bad := layout.with_fixes(m, setup.engine, setup.weights, setup.tp, setup.pp)):
        alt = layout.first_valid(m, setup.engine, setup.weights, w.gpus)
        refused = f"TP{setup.tp}{f' x PP{setup.pp}' if setup.pp > 1 else ''}: \"{bad[0].message}\""
        if alt is not None:
            setup = replace(setup, tp=alt[0], pp=alt[1])
    if w.gpus is not None and w.gpus > max_gpus_per_replica:
        got: ServingSizing | str = Refusal(f"a replica of {w.gpus} GPUs does not fit in {max_gpus_per_replica} GPUs",
                                           f"{w.gpus} 张卡的副本超过了 {max_gpus_per_replica} 张卡的上限")
    else:
        d = size_deployment(m, gpu, target, setup, max_gpus_per_replica, fixed_tp=w.gpus is not None,
                            shorter_context_ok=w.max_model_len is None, single=w.gpus is not None)
        got = d if isinstance(d, str) else sizing_out(m, gpu, d, target, refused)
    if len(_CACHE) >= _CACHE_MAX:
        _CACHE.clear()  # rare; a single call, safe next to readers in other threads
    _CACHE[key] = (m, got)
    return got


def sizing_out(m: ModelSpec, gpu: GpuSpec, d: DeploymentSize, t: ServingTarget,
               refused: str | None = None) -> ServingSizing:
    s, mem, p = d.setup, d.memory, d.performance
    kv = kv_layout(m, s)
    per_gpu = kv.bytes_per_token_per_gpu
    label, label_zh = engine_label(s.engine, s.engine_version, runtime(gpu))
    return ServingSizing(
        gpu=gpu.id, gpu_name=gpu.name, engine=s.engine, weights=s.weights, kv_dtype=s.kv_dtype,
        gpus_per_replica=s.gpus, tensor_parallel=s.tp, pipeline_parallel=s.pp, replicas=d.replicas,
        total_gpus=d.total_gpus, memory_gpus_per_replica=d.memory_tp, runtime=runtime(gpu),
        engine_assumed=label, engine_assumed_zh=label_zh,
        mem_fraction=mem.mem_fraction, max_model_len=mem.max_model_len,
        weights_gib_per_gpu=round(mem.weights_gib, 3), activation_peak_gib=round(mem.activation_peak_gib, 3),
        vision_profile_gib=round(mem.vision_gib, 3), graph_gib=round(mem.graph_gib, 3), kv_bytes_per_token=per_gpu,
        kv_bytes_per_token_model=per_gpu * s.tp * s.pp / max(1, _replication(m, s.tp)),
        kv_cache_gib_per_gpu=round(mem.kv_cache_gib, 3), kv_capacity_tokens=mem.kv_capacity_tokens,
        max_concurrency=round(mem.max_concurrency, 2), max_concurrency_at_load=round(p.max_concurrency, 1),
        starts=mem.starts, starts_reason=mem.starts_reason, input_tokens=t.input_tokens,
        output_tokens=t.output_tokens, concurrency=round(p.concurrency, 2),
        output_tokens_per_s=round(d.output_tokens_per_s, 1),
        output_tokens_per_s_per_replica=round(p.output_tokens_per_s, 1),
        ttft_ms=None if p.ttft_ms is None else round(p.ttft_ms, 1), tpot_ms=round(p.tpot_ms, 2),
        decode_bound=p.decode_bound, saturated=p.saturated, meets_limits=d.meets_limits, limited_by=d.limited_by,
        headroom=d.headroom, headroom_zh=d.headroom_zh,
        rejected_degrees=[f"{tp} GPU{'s' if tp > 1 else ''}: {why}" for tp, why in d.rejected],
        refused_layout=refused, notes=[*mem.notes, *p.notes],
        driver=d.driver, driver_zh=d.driver_zh, latency_infeasible=d.latency_infeasible,
        demand_output_tokens_per_s=round(d.demand_output_tokens_per_s, 1),
        capacity_output_tokens_per_s=round(d.capacity_output_tokens_per_s, 1), oversized=d.oversized,
        large=d.total_gpus > LARGE_GPUS,
    )


def _replication(m: ModelSpec, tp: int) -> float:
    """How many GPUs of a replica hold the same KV head (MLA: all of them; GQA past tp = kv heads: tp / kv)."""
    if m.mla is not None:
        return float(tp)
    kv = m.num_kv_heads or m.num_heads or 1
    return max(1.0, tp / kv) if tp > kv else 1.0


def cost_per_million(cost_per_hour: float | None, tokens_per_s: float) -> float | None:
    if cost_per_hour is None or tokens_per_s <= 0 or not math.isfinite(tokens_per_s):
        return None
    return cost_per_hour / (tokens_per_s * 3600 / 1e6)
