"""Diagnose a server: 'TP4 works, TP8 OOMs, why?', 'HF runs, vLLM OOMs', 'TP8 vs TP4', 'why does FP8 run on
A100', 'is 9 tok/s normal', 'lmdeploy tp=4 70B: memory creeps up, then OOM'. Pure: the catalog and the setups
the post describes in, a typed `ServeDiagnosis` out.

Each setup is sized as its engine runs it (service/sizing/serving: the engine's defaults, the model's own
context unless the post names --max-model-len, the engine's own start-up messages); the verdict compares what the
engine says with what the post saw; the cause is the engine's reason, and the fix is one flag, re-sized to show
that it works (`fixed`). Servers the engine does not size (transformers, Ollama) are estimated by serve_local.py.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from service.catalog.loader import Catalog
from service.catalog.queries import resolve_gpu
from service.catalog.schema import GpuSpec, ModelSpec
from service.lexicon.data import lexicon
from service.planner.questions.serve_local import local_run
from service.planner.serving_size import resolve_serving_model
from service.serving_workload import ServingWorkload
from service.sizing.serving import layout
from service.sizing.serving.device import runtime
from service.sizing.serving.engines import default_context, engine_memory
from service.sizing.serving.perf import performance
from service.sizing.serving.support import fp8_weight_only
from service.sizing.serving.types import EngineMemory, LoadPoint, ServingSetup
from service.sizing.serving.versions import engine_label

SIZED = ("vllm", "sglang", "lmdeploy", "trtllm")
AS_VLLM = {"tgi": "vllm", "mindie": "vllm", "xinference": "vllm", "vllm-ascend": "vllm"}  # sized with vLLM's policy
LOCAL = ("hf", "transformers", "ollama", "llamacpp")
SPEED_BAND = (0.5, 2.0)  # observed / estimated tokens/s within this: what the setup gives
Asked = Literal["oom", "growth", "slow", "compare", "why_runs"]
Outcome = Literal["worked", "oom", "slow", "unknown"]


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServeSetupIn(_M):
    """One setup as the post states it (None: not said; the engine's default is assumed)."""

    engine: str = "vllm"
    gpu: str
    gpus: int = Field(default=1, ge=1, le=64)
    tp: int | None = Field(default=None, ge=1, le=64)
    pp: int | None = Field(default=None, ge=1, le=16)
    weights: str | None = None
    kv_dtype: str = "auto"
    max_model_len: int | None = Field(default=None, ge=16)
    mem_fraction: float | None = Field(default=None, gt=0, le=1)
    enforce_eager: bool = False
    outcome: Outcome = "unknown"
    tokens_per_s: float | None = Field(default=None, gt=0)
    concurrency: float | None = Field(default=None, gt=0)
    seen_running: bool = False  # the post saw it answer: no start-up refusal (ServingSetup.seen_running)
    gpus_assumed: bool = Field(default=False, description="the post gave no GPU count: the fewest whose weights load")


class ServeCase(_M):
    """What the post describes: the model, its setups, what it asks."""

    model: str
    setups: list[ServeSetupIn] = Field(min_length=1, max_length=4)
    asked: Asked
    input_tokens: int | None = None
    output_tokens: int | None = None


class SetupFigures(_M):
    """The engine's figures for one setup."""

    engine: str
    engine_assumed: str
    engine_assumed_zh: str
    gpu: str
    gpu_name: str
    gpus: int
    tp: int
    pp: int
    weights: str
    max_model_len: int
    mem_fraction: float | None
    enforce_eager: bool = False
    outcome: Outcome = "unknown"
    starts: bool
    reason: str = Field(description="the engine's own verdict or message")
    reason_zh: str = Field(default="", description="the verdict in Chinese (the engine's message in backticks)")
    fix: str | None = None
    weights_gib_per_gpu: float
    kv_cache_gib_per_gpu: float
    kv_capacity_tokens: int
    max_model_len_fits: int
    activation_peak_gib: float = 0.0
    graph_gib: float = 0.0
    tokens_per_s_single: float | None = Field(default=None, description="one request's decode rate")
    tokens_per_s_at_load: float | None = Field(default=None, description="all requests at the stated concurrency")
    observed_tokens_per_s: float | None = None
    concurrency: float | None = None
    gpu_share: float | None = Field(default=None, description="Ollama: the share of the weights on the GPU")
    weight_only_fp8: bool = False
    nvlink: bool = True


class ServeDiagnosis(_M):
    kind: Literal["serve_diagnosis"] = "serve_diagnosis"
    model: str
    model_name: str
    asked: Asked
    expected: bool | None
    cause: str = Field(description="code: the renderer's words")
    causes: list[str] = Field(default_factory=list, description="other likely causes, codes")
    fix: str | None = Field(default=None, description="the one flag that fixes it")
    setups: list[SetupFigures]
    fixed: SetupFigures | None = Field(default=None, description="the failing setup re-sized with the fix")
    ratio: float | None = Field(default=None, description="observed / estimated tokens/s")
    faster: int | None = Field(default=None, description="compare: the index of the faster setup")
    engine_assumed: str
    engine_assumed_zh: str
    assumptions: list[str] = Field(default_factory=list)
    assumptions_zh: list[str] = Field(default_factory=list)


def _setup(s: ServeSetupIn, m: ModelSpec) -> ServingSetup:
    engine = AS_VLLM.get(s.engine, s.engine)
    tp, pp = (s.tp, s.pp or 1) if s.tp else (max(1, s.gpus // s.pp), s.pp) if s.pp else layout.default_layout(s.gpus)
    return ServingSetup(engine=engine if engine in SIZED else "vllm",  # type: ignore[arg-type]
                        weights=(s.weights or m.released_dtype),  # type: ignore[arg-type]
                        kv_dtype=s.kv_dtype if s.kv_dtype in ("auto", "fp8") else "auto",  # type: ignore[arg-type]
                        tp=tp, pp=pp, mem_fraction=s.mem_fraction,
                        max_model_len=s.max_model_len or default_context(m), enforce_eager=s.enforce_eager,
                        seen_running=s.seen_running)


ASSUMED_COUNTS = (1, 2, 4, 8, 16, 32)


def _assumed_count(m: ModelSpec, g: GpuSpec, s: ServeSetupIn) -> ServeSetupIn:
    """No count said: the fewest GPUs (TP inside a node, nodes as stages) whose weights load."""
    for n in ASSUMED_COUNTS:
        trial = s.model_copy(update={"gpus": n, "tp": None, "pp": None})
        mem = engine_memory(m, g, _setup(trial, m))
        if "while loading" not in mem.starts_reason:
            return trial
    return s


def _figures(m: ModelSpec, g: GpuSpec, s: ServeSetupIn, lengths: tuple[int, int]) -> SetupFigures:
    inp, out = lengths
    if s.engine in LOCAL:
        engine = "ollama" if s.engine in ("ollama", "llamacpp") else "hf"
        r = local_run(m, g, engine, s.weights, s.max_model_len, inp + out)  # type: ignore[arg-type]
        label = ("Ollama (llama.cpp, GGUF Q4_K_M)", "Ollama（llama.cpp，GGUF Q4_K_M）") if engine == "ollama" else (
            "Hugging Face transformers generate", "Hugging Face transformers generate")
        reason = (f"{r.weights_gib:.1f} GiB of weights + {r.kv_gib:.1f} GiB of KV cache for {r.context:,} tokens "
                  f"{'fit' if r.fits else 'do not fit'} in the card")
        return SetupFigures(engine=s.engine, engine_assumed=label[0], engine_assumed_zh=label[1], gpu=g.id,
                            gpu_name=g.name, gpus=s.gpus, tp=1, pp=1, weights=r.weights, max_model_len=r.context,
                            mem_fraction=None, outcome=s.outcome, starts=r.fits or engine == "ollama",
                            reason=reason, reason_zh=(f"{r.weights_gib:.1f} GiB 权重 + {r.context:,} tokens 的 "
                                                      f"{r.kv_gib:.1f} GiB KV 缓存"
                                                      f"{'放得进' if r.fits else '放不进'}这张卡"),
                            weights_gib_per_gpu=round(r.weights_gib, 2),
                            kv_cache_gib_per_gpu=round(r.kv_gib, 2), kv_capacity_tokens=r.context,
                            max_model_len_fits=r.context, tokens_per_s_single=round(r.tokens_per_s, 1) or None,
                            observed_tokens_per_s=s.tokens_per_s, gpu_share=round(r.gpu_share, 2),
                            nvlink=g.nvlink_gb_s > 0)
    if s.gpus_assumed and not s.tp:
        s = _assumed_count(m, g, s)
    setup = _setup(s, m)
    mem = engine_memory(m, g, setup)
    single = at_load = None
    if mem.starts:
        one = performance(m, g, setup, LoadPoint(inp, out, concurrency=1), mem)
        single = round(1000 / one.tpot_ms, 1) if one.tpot_ms else None
        if s.concurrency:
            at_load = round(performance(m, g, setup, LoadPoint(inp, out, concurrency=s.concurrency), mem)
                            .output_tokens_per_s, 1)
    label = engine_label(setup.engine, None, runtime(g))
    if s.engine in AS_VLLM:
        name = lexicon().labels("engines", "en").get(s.engine, s.engine)
        label = (f"{label[0]} standing in for {name}", f"{label[1]}（{name} 按同样的方式预留显存）")
    return _out(s, setup, g, mem, label, single, at_load)


def _out(s: ServeSetupIn, setup: ServingSetup, g: GpuSpec, mem: EngineMemory, label: tuple[str, str],
         single: float | None, at_load: float | None) -> SetupFigures:
    return SetupFigures(
        engine=s.engine, engine_assumed=label[0], engine_assumed_zh=label[1], gpu=g.id, gpu_name=g.name,
        gpus=setup.gpus, tp=setup.tp, pp=setup.pp, weights=setup.weights, max_model_len=mem.max_model_len,
        mem_fraction=mem.mem_fraction, enforce_eager=setup.enforce_eager, outcome=s.outcome, starts=mem.starts,
        reason=mem.starts_reason, reason_zh=mem.starts_reason_zh, fix=mem.fix or None, weights_gib_per_gpu=round(mem.weights_gib, 2),
        kv_cache_gib_per_gpu=round(mem.kv_cache_gib, 2), kv_capacity_tokens=mem.kv_capacity_tokens,
        max_model_len_fits=mem.max_model_len_fits, activation_peak_gib=round(mem.activation_peak_gib, 2),
        graph_gib=round(mem.graph_gib, 2), tokens_per_s_single=single, tokens_per_s_at_load=at_load,
        observed_tokens_per_s=s.tokens_per_s, concurrency=s.concurrency,
        weight_only_fp8=fp8_weight_only(g, setup.weights), nvlink=g.nvlink_gb_s > 0)


_FLAG = re.compile(r"--(?P<k>[a-z-]+)(?:\s+(?P<v>[\d.]+|fp8))?")


def apply_fix(s: ServeSetupIn, fix: str) -> ServeSetupIn:
    """The setup with a fix's flags applied ('--max-model-len 16384', '--tensor-parallel-size 2 ...')."""
    out = s
    for f in _FLAG.finditer(fix):
        k, v = f.group("k"), f.group("v")
        if k == "max-model-len" and v:
            out = out.model_copy(update={"max_model_len": int(float(v))})
        elif k in ("gpu-memory-utilization", "mem-fraction-static", "cache-max-entry-count") and v:
            out = out.model_copy(update={"mem_fraction": float(v)})
        elif k == "tensor-parallel-size" and v:
            out = out.model_copy(update={"tp": int(v), "gpus": int(v) * (out.pp or 1)})
        elif k == "pipeline-parallel-size" and v:
            out = out.model_copy(update={"pp": int(v), "gpus": (out.tp or 1) * int(v)})
        elif k == "quantization" and v == "fp8":
            out = out.model_copy(update={"weights": "fp8"})
        elif k == "enforce-eager":
            out = out.model_copy(update={"enforce_eager": True})
        elif k == "kv-cache-dtype":
            out = out.model_copy(update={"kv_dtype": "fp8"})
    return out


def _cause_of(f: SetupFigures) -> str:
    """The engine's reason for not starting, as a code."""
    r = f.reason
    for code, words in (("layout", "refuses TP"), ("weights", "while loading"), ("graphs", "capture needs"),
                        ("no_pool", "no memory left for the KV cache"), ("max_len", "less than one sequence"),
                        ("unsupported", "compute capability"), ("unsupported", "no FP8"), ("unsupported", "only")):
        if words in r:
            return code
    return "engine"


def _runtime_oom(f: SetupFigures) -> tuple[str, str | None]:
    """It starts, yet the post saw an OOM (or memory creeping up): what grows outside the pool, and the flag."""
    frac = f.mem_fraction or 0.9
    if f.engine == "lmdeploy":
        return "lmdeploy_runtime", f"--cache-max-entry-count {max(0.3, round(frac - 0.3, 1)):g}"
    if f.engine == "sglang":
        return "sglang_runtime", f"--mem-fraction-static {round(frac - 0.05, 2):g}"
    if f.engine in LOCAL:
        return "local_runtime", None
    if f.engine == "tgi":  # warm-up sized the prefill; the rest of --cuda-memory-fraction (default 1.0) is KV cache
        return "tgi_runtime", "--cuda-memory-fraction 0.9"
    if f.engine == "trtllm":
        return "trtllm_runtime", f"free_gpu_memory_fraction={round(frac - 0.05, 2):g}"
    return "vllm_runtime", f"--gpu-memory-utilization {round(frac - 0.05, 2):g}"


def serve_diagnose(cat: Catalog, case: ServeCase) -> ServeDiagnosis:
    """Is what the post saw what these setups give? The engine's figures per setup, the cause, the one fix."""
    m, said = resolve_serving_model(ServingWorkload(model=case.model), cat.models)
    lengths = (case.input_tokens or 1024, case.output_tokens or 256)
    figures: list[SetupFigures] = []
    for s in case.setups:
        g, _ = resolve_gpu(s.gpu, cat.gpus)
        figures.append(_figures(m, g, s.model_copy(update={"gpu": g.id}), lengths))
    out = _verdict(cat, m, case, figures, lengths)
    head = next((f for f in figures if f.engine not in LOCAL), figures[0])
    return out.model_copy(update={
        "engine_assumed": head.engine_assumed, "engine_assumed_zh": head.engine_assumed_zh,
        "assumptions": [f"{head.engine_assumed} assumed.", *[en for en, _ in said]],
        "assumptions_zh": [f"按 {head.engine_assumed_zh}估算。", *[zh for _, zh in said]]})


def _base(m: ModelSpec, case: ServeCase, figures: list[SetupFigures], **kw: object) -> ServeDiagnosis:
    return ServeDiagnosis(model=m.id, model_name=m.name, asked=case.asked, setups=figures, engine_assumed="",
                          engine_assumed_zh="", **kw)


def _fixed(cat: Catalog, m: ModelSpec, s: ServeSetupIn, fix: str | None,
           lengths: tuple[int, int]) -> SetupFigures | None:
    if not fix or s.engine in LOCAL:
        return None
    g, _ = resolve_gpu(s.gpu, cat.gpus)
    return _figures(m, g, apply_fix(s.model_copy(update={"gpu": g.id}), fix), lengths)


def _verdict(cat: Catalog, m: ModelSpec, case: ServeCase, figures: list[SetupFigures],
             lengths: tuple[int, int]) -> ServeDiagnosis:
    if case.asked == "why_runs":
        f = figures[0]
        if f.weight_only_fp8:  # and when this context does not start, the flag that makes it
            fixed = None if f.starts else _fixed(cat, m, case.setups[0], f.fix, lengths)
            return _base(m, case, figures, expected=True, cause="fp8_weight_only", fix=None if f.starts else f.fix,
                         fixed=fixed)
        return _base(m, case, figures, expected=True, cause="fp8_native" if f.starts else _cause_of(f),
                     fix=f.fix)
    if case.asked == "compare":
        return _compare(m, case, figures)
    if case.asked == "slow":
        return _slow(m, case, figures)
    return _oom(cat, m, case, figures, lengths)


def _oom(cat: Catalog, m: ModelSpec, case: ServeCase, figures: list[SetupFigures],
         lengths: tuple[int, int]) -> ServeDiagnosis:
    failing = [i for i, f in enumerate(figures) if f.outcome == "oom"] or [len(figures) - 1]
    i = failing[0]
    f, s = figures[i], case.setups[i]
    local_ok = [x for x in figures if x.engine in LOCAL and x.outcome == "worked"]
    if not f.starts:
        cause = _cause_of(f)
        if local_ok and cause in ("max_len", "no_pool"):
            cause = "prealloc_max_len"  # transformers ran: vLLM reserves memory and a pool for max_model_len
        fixed = _fixed(cat, m, s, f.fix, lengths)
        return _base(m, case, figures, expected=True, cause=cause, fix=f.fix, fixed=fixed)
    if case.asked == "growth" or f.engine in ("lmdeploy", "sglang"):
        cause, fix = _runtime_oom(f)
        return _base(m, case, figures, expected=case.asked == "growth", cause=cause, fix=fix,
                     causes=["long_prompts", "other_process"])
    worked = [x for x in figures if x.outcome == "worked" and x is not f]
    causes = ["graphs_per_rank", "other_process"] if worked and f.tp > worked[0].tp else [
        "long_prompts", "other_process"]
    cause, fix = _runtime_oom(f)
    return _base(m, case, figures, expected=False, cause="starts_here", causes=[cause, *causes], fix=fix)


def _slow(m: ModelSpec, case: ServeCase, figures: list[SetupFigures]) -> ServeDiagnosis:
    f = figures[0]
    est = f.tokens_per_s_at_load if f.concurrency and f.tokens_per_s_at_load else f.tokens_per_s_single
    seen = f.observed_tokens_per_s
    if f.engine in ("ollama", "llamacpp") and (f.gpu_share or 1.0) < 1.0:
        # layers on the CPU: what the post sees is expected of this num_ctx; a shorter one keeps it all on the GPU
        return _base(m, case, figures, expected=True, cause="ollama_offload", fix="num_ctx 4096",
                     ratio=None if not (seen and est) else round(seen / est, 2))
    if not f.starts:
        return _base(m, case, figures, expected=None, cause=_cause_of(f), fix=f.fix)
    if seen is None or not est:
        return _base(m, case, figures, expected=None, cause="no_figure")
    ratio = round(seen / est, 2)
    lo, hi = SPEED_BAND
    if lo <= ratio <= hi:
        return _base(m, case, figures, expected=True, cause="bandwidth_bound", ratio=ratio)
    if ratio > hi:
        return _base(m, case, figures, expected=True, cause="aggregate", ratio=ratio)
    if f.engine in ("ollama", "llamacpp"):  # it fits at this num_ctx: a CPU split comes from a longer context,
        return _base(m, case, figures, expected=False, cause="ollama_cpu_split",  # more slots or a larger quant
                     causes=["other_process"], fix=f"num_ctx {f.max_model_len}", ratio=ratio)
    causes = [c for c, on in (("eager", f.enforce_eager), ("pcie_tp", f.tp > 1 and not f.nvlink),
                              ("hf_eager", f.engine in LOCAL)) if on] + ["ttft_counted", "warmup", "other_process"]
    fix = "drop --enforce-eager" if f.enforce_eager else None
    return _base(m, case, figures, expected=False, cause="slower_than_estimate", causes=causes, fix=fix, ratio=ratio)


def _compare(m: ModelSpec, case: ServeCase, figures: list[SetupFigures]) -> ServeDiagnosis:
    rates = [(f.tokens_per_s_at_load or f.tokens_per_s_single or 0.0) for f in figures]
    if not any(rates):
        f = next(x for x in figures if not x.starts)
        return _base(m, case, figures, expected=None, cause=_cause_of(f), fix=f.fix)
    best = max(range(len(figures)), key=lambda i: rates[i])
    other = 1 - best if len(figures) == 2 else 0
    observed = [f.observed_tokens_per_s for f in figures]
    expected = None
    if all(observed):  # the post measured both: does its order match the engine's?
        expected = (observed[best] or 0) >= (observed[other] or 0)
    wider = figures[best].tp > figures[other].tp
    cause = "tp_splits_reads" if wider else "tp_comm"
    return _base(m, case, figures, expected=expected, cause=cause, faster=best,
                 fix=f"--tensor-parallel-size {figures[best].tp}", ratio=round(rates[best] / max(rates[other], 1e-9), 2))

