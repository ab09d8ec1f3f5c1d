"""Causes of a slow server (tokens/s, TTFT): each a pure function of the `ServeRun`, the figure it explains from the
serving engine (service/sizing/serving/perf.py, steps.py; service/planner/questions/serve_local.py for llama.cpp,
Ollama and transformers), and the fix.

    decode_bandwidth  one stream's decode reads every active weight and its KV once per token: tok/s ~ the card's
                      bandwidth / bytes read per token; the total at the stated concurrency
    ttft_queue        TTFT = the prompt's prefill compute + the wait in the queue at the offered load
                      (ttft_saturated: more requests offered than it serves, so the queue grows while the load lasts)
    pcie_allreduce    TP > 1 without NVLink: two all-reduces per layer per step over PCIe
    tp_replicas       tensor parallelism speeds one request, not throughput: replicas of a model that fits one card
                      serve more
    cpu_offload       llama.cpp / Ollama / ktransformers with weights beyond the card: the CPU's layers read at the
                      host's RAM bandwidth
    fp8_weight_only   FP8 weights on a card without FP8 tensor cores run weight-only (W8A16 Marlin): memory, not speed
"""

from __future__ import annotations

import math

from service.planner.causes.cases import ServeRun
from service.planner.causes.serve_memory import UNSIZED, no_mla
from service.planner.causes.types import Cause, Fix, Quantity
from service.planner.questions.serve_local import HOST_BW_GB_S, local_run
from service.sizing.serving.perf import performance
from service.sizing.serving.steps import step_model
from service.sizing.serving.support import fp8_weight_only as weight_only
from service.sizing.serving.types import LoadPoint
from service.sizing.serving.weights import estimate_weights

LOCAL = frozenset({"ollama", "llamacpp", "hf", "transformers"})
DEFAULT_LENGTHS = (1024, 256)
MIN_RATIO = 1.15


def lengths(run: ServeRun) -> tuple[int, int]:
    return (run.load.input_tokens or DEFAULT_LENGTHS[0], run.load.output_tokens or DEFAULT_LENGTHS[1])


def single_stream_tps(run: ServeRun) -> float | None:
    """One request's decode rate under the engine (None: it does not start)."""
    if run.engine in LOCAL:
        r = local_run(run.model, run.gpu, "ollama" if run.engine in ("ollama", "llamacpp") else "hf",
                      run.setup.weights, run.setup.max_model_len, sum(lengths(run)))
        return r.tokens_per_s or None
    if not run.mem.starts:
        return None
    inp, out = lengths(run)
    p = performance(run.model, run.gpu, run.setup, LoadPoint(inp, out, concurrency=1), run.mem)
    return 1000.0 / p.tpot_ms if p.tpot_ms else None


def at_load_tps(run: ServeRun) -> float | None:
    """All requests' output tokens/s at the stated concurrency or request rate."""
    if run.engine in UNSIZED or not run.mem.starts or not (run.load.concurrency or run.load.request_rate):
        return None
    inp, out = lengths(run)
    point = LoadPoint(inp, out, concurrency=float(run.load.concurrency)) if run.load.concurrency else \
        LoadPoint(inp, out, request_rate_per_s=run.load.request_rate)
    return performance(run.model, run.gpu, run.setup, point, run.mem).output_tokens_per_s


def decode_bandwidth(run: ServeRun) -> Cause:
    single = single_stream_tps(run)
    if single is None or run.engine in LOCAL and run.engine != "hf":
        return Cause.no("decode_bandwidth")
    w = estimate_weights(run.model, run.setup.weights, run.setup.tp, run.setup.pp)
    load = at_load_tps(run)
    return Cause(code="decode_bandwidth", explains=Quantity.of(single, "tok/s", 1),
                 detail={"bw_gb_s": run.gpu.mem_bw_gb_s, "read_gib": round(w.active_read_gib_per_gpu, 1),
                         "tp": run.setup.tp, "at_load_tps": round(load or 0.0),
                         "concurrency": float(run.load.concurrency or 0),
                         "request_rate": float(run.load.request_rate or 0)})


def ttft_queue(run: ServeRun) -> Cause:
    if run.engine in UNSIZED or not run.mem.starts or not (run.load.request_rate or run.load.concurrency):
        return Cause.no("ttft_queue")
    inp, out = lengths(run)
    point = LoadPoint(inp, out, concurrency=float(run.load.concurrency)) if run.load.concurrency else \
        LoadPoint(inp, out, request_rate_per_s=run.load.request_rate)
    p = performance(run.model, run.gpu, run.setup, point, run.mem)
    if p.ttft_ms is None:
        return Cause.no("ttft_queue")
    queue = max(0.0, p.ttft_ms - p.prefill_ms)
    offered = run.load.request_rate or 0.0
    replicas = math.ceil(offered / p.request_rate_per_s) if p.saturated and offered and p.request_rate_per_s else 0
    fix = Fix(code="replicas", setting=None, fixed=Quantity.of(replicas, "replicas", 0)) if replicas > 1 else Fix(
        code="chunked_prefill", setting="--enable-chunked-prefill --max-num-batched-tokens 2048")
    # offered beyond what it serves: the queue (and TTFT) grows as long as the load lasts, whatever the figure
    code = "ttft_saturated" if p.saturated and offered else "ttft_queue"
    return Cause(code=code, explains=Quantity.of(p.ttft_ms, "ms", 0), fix=fix,
                 detail={"prefill_ms": round(p.prefill_ms), "queue_ms": round(queue),
                         "served_rps": round(p.request_rate_per_s, 2), "offered_rps": offered,
                         "saturated": 1.0 if p.saturated else 0.0})


def pcie_allreduce(run: ServeRun) -> Cause:
    if run.engine in UNSIZED or run.setup.tp <= 1 or run.gpu.nvlink_gb_s > 0 or not run.mem.starts:
        return Cause.no("pcie_allreduce")
    s = step_model(run.model, run.gpu, run.setup)
    inp, out = lengths(run)
    step, _ = s.decode_s(1, inp + out / 2)
    comm = s.comm_s(1)
    if step <= comm or step / (step - comm) < MIN_RATIO:
        return Cause.no("pcie_allreduce")
    one = run.mem_with(tp=1)
    setting = f"--tensor-parallel-size 1 ({run.setup.tp} replicas)" if one.starts else \
        f"--pipeline-parallel-size {run.setup.tp}"
    return Cause(code="pcie_allreduce", explains=Quantity.of(step / (step - comm), "x", 2),
                 fix=Fix(code="replicas_or_pp", setting=setting),
                 detail={"comm_ms": round(comm * 1000, 1), "step_ms": round(step * 1000, 1), "tp": run.setup.tp})


def tp_replicas(run: ServeRun) -> Cause:
    conc = run.load.concurrency
    if run.engine in UNSIZED or run.setup.tp <= 1 or not conc or not run.mem.starts:
        return Cause.no("tp_replicas")
    one = run.mem_with(tp=1)
    if not one.starts:
        return Cause.no("tp_replicas")
    from dataclasses import replace

    inp, out = lengths(run)
    tp = run.setup.tp
    wide = performance(run.model, run.gpu, run.setup, LoadPoint(inp, out, concurrency=float(conc)), run.mem)
    each = performance(run.model, run.gpu, replace(run.setup, tp=1), LoadPoint(inp, out, concurrency=conc / tp), one)
    ratio = tp * each.output_tokens_per_s / max(1e-9, wide.output_tokens_per_s)
    if ratio < MIN_RATIO:
        return Cause.no("tp_replicas")
    return Cause(code="tp_replicas", explains=Quantity.of(ratio, "x", 2),
                 fix=Fix(code="replicas", setting=f"--tensor-parallel-size 1, {tp} replicas",
                         fixed=Quantity.of(tp * each.output_tokens_per_s, "tok/s", 0)),
                 detail={"tp_tps": round(wide.output_tokens_per_s), "tp": tp})


def cpu_offload(run: ServeRun) -> Cause:
    if run.engine == "ktransformers" or (run.engine not in LOCAL and run.knobs.offload):
        w = estimate_weights(run.model, run.setup.weights)
        cpu_bytes = w.active_read_gib_per_gpu * 2**30 * (0.8 if run.model.moe is not None else 1.0)
        tps = run.host_bw_gb_s * 1e9 / max(1.0, cpu_bytes)
        return Cause(code="cpu_offload", explains=Quantity.of(tps, "tok/s", 1),
                     fix=Fix(code="more_vram", setting=None),
                     detail={"cpu_share": 0.8, "host_bw": run.host_bw_gb_s, "weights_gib": round(w.weights_gib_per_gpu)})
    if run.engine not in ("ollama", "llamacpp"):
        return Cause.no("cpu_offload")
    r = local_run(run.model, run.gpu, "ollama", run.setup.weights, run.setup.max_model_len, sum(lengths(run)))
    if r.gpu_share >= 1.0:
        return Cause.no("cpu_offload")
    return Cause(code="cpu_offload", explains=Quantity.of(r.tokens_per_s, "tok/s", 1),
                 fix=Fix(code="gpu_layers", setting="-ngl 99 / num_ctx 4096"),
                 detail={"cpu_share": round(1 - r.gpu_share, 2), "host_bw": HOST_BW_GB_S,
                         "weights_gib": round(r.weights_gib, 1)})


def fp8_weight_only(run: ServeRun) -> Cause:
    if not weight_only(run.gpu, run.setup.weights):
        return Cause.no("fp8_weight_only")
    return Cause(code="fp8_weight_only", explains=None, fix=Fix(code="int8_or_fp16", setting=None),
                 detail={"cc": float(run.gpu.compute_capability or 0)})


TTFT_CODES = ("ttft_queue", "ttft_saturated")
SLOW_CAUSES = (cpu_offload, ttft_queue, no_mla, pcie_allreduce, tp_replicas, fp8_weight_only, decode_bandwidth)
