"""Throughput and latency of one replica at a load point.

Continuous batching with chunked prefill (vLLM V1, SGLang, TensorRT-LLM's in-flight batching, LMDeploy): every
step decodes each running sequence by one token and carries a chunk of a waiting prompt. Over a second the
replica spends `rate x prefill compute` on prompts (utilisation rho) and the rest decoding, so

  TPOT = a step decoding C sequences at mean context I + O/2 and carrying rate x I x TPOT prompt tokens, whose
         compute overlaps the decode's memory time (roofline of the mixed step)
  TTFT = the prompt's compute + one decode step per chunk it rides in + the M/D/1 wait for earlier prompts
         (rho = rate x one prompt's compute), never more than the other users' prompts half over (a closed
         population of C users has at most C - 1 ahead)
  rate = C / (TTFT + (O - 1) x TPOT)        (closed loop of C users; solved by fixed-point iteration)

A request rate R is an open loop: the replica holds C = R x latency sequences (Little's law) as long as that
stays within the KV pool and max_num_seqs and rho < 1; beyond, the queue grows and TTFT has no steady value:
a fluid queue then gives the mean TTFT over a peak of QUEUE_WINDOW_S seconds at that rate (arrivals at R, the
replica completing mu req/s: the request arriving at t waits (R - mu) t / mu, the mean over the window half
the last one's wait) and the throughput is what the pool runs, mu.
Sequences wider than the KV pool wait in the queue (closed loop: their wait is added to TTFT).
"""

from __future__ import annotations

import math
from dataclasses import replace

from service.catalog.schema import GpuSpec, ModelSpec
from service.sizing.serving.engines import default_context, engine_defaults, engine_memory, kv_layout
from service.sizing.serving.steps import EFFICIENCY, Efficiency, StepModel, step_model
from service.sizing.serving.types import GIB, Bound, EngineMemory, LoadPoint, Performance, ServingSetup
from service.sizing.serving.versions import vllm_regime

RHO_MAX = 0.97  # prefill share of the replica beyond which the open loop is saturated
QUEUE_WINDOW_S = 60.0  # an overloaded rate is held this long: the TTFT reported is the mean over it
_ITERATIONS = 40


def max_concurrency_at(m: ModelSpec, setup: ServingSetup, mem: EngineMemory, input_tokens: int,
                       output_tokens: int, max_num_seqs: int) -> float:
    """Sequences the replica holds at once at these lengths: the KV pool over a sequence's mean footprint
    (prompt + half the output: sequences finish at different times), capped by max_num_seqs."""
    kv = kv_layout(m, setup)
    mean_tokens = input_tokens + output_tokens / 2
    per_seq = kv.bytes_for_sequence(max(1, math.ceil(mean_tokens)))
    return min(float(max_num_seqs), mem.kv_cache_gib * GIB / per_seq) if per_seq > 0 else float(max_num_seqs)


def mixes_prefill(m: ModelSpec, setup: ServingSetup) -> bool:
    """Whether a step carries prompt chunks next to the decodes (vLLM V1 and V0 with chunked prefill,
    TensorRT-LLM's in-flight batching) or prompts run as steps of their own that stall the decodes (SGLang
    without --enable-mixed-chunk, LMDeploy, vLLM V0 without chunked prefill)."""
    if setup.engine == "trtllm":
        return True
    if setup.engine != "vllm":
        return False
    regime = vllm_regime(setup.engine_version)
    max_len = setup.max_model_len or default_context(m)
    return regime.v1 or (regime.chunked_over_32k and max_len > 32768)


def _closed_loop(s: StepModel, users: float, inp: int, out: int, chunk: int,
                 mixed: bool = True, closed: bool = True) -> tuple[float, float, float, Bound]:
    """(rate req/s, TTFT s, TPOT s, bound) for `users` sequences in flight. `closed`: a population of `users`
    (at most users - 1 prompts ahead); else the in-flight count of an open arrival process (M/D/1 unbounded)."""
    ctx = inp + out / 2
    alone, bound = s.decode_s(users, ctx)
    pf = s.prefill_compute_s(inp)
    budget = max(1.0, chunk - users)  # prompt tokens a step carries besides the decodes
    chunks = max(1, math.ceil(inp / budget))
    rate = users / (pf + (chunks + max(0, out - 1)) * alone)
    ttft = tpot = alone
    for _ in range(_ITERATIONS):
        rho = min(RHO_MAX, rate * pf)
        # M/D/1 wait for earlier prompts, but a closed population of `users` never queues more than the others
        wait = rho / (1 - rho) * pf / 2
        if closed:
            wait = min(wait, max(0.0, users - 1) * pf / 2)
        if mixed:
            tpot, bound = s.decode_s(users, ctx, min(budget, rate * inp * tpot), inp)
            ttft = pf + chunks * alone + wait
        else:  # prompt steps stall every decode: the decodes get 1 - rho of the time
            tpot = alone / (1 - rho)
            ttft = alone / 2 + s.prefill_s(inp, chunk) + wait
        new = 0.5 * rate + 0.5 * users / (ttft + max(0, out - 1) * tpot)
        if abs(new - rate) <= 1e-4 * rate:
            return new, ttft, tpot, bound
        rate = new
    return rate, ttft, tpot, bound


def performance(m: ModelSpec, gpu: GpuSpec, setup: ServingSetup, load: LoadPoint,
                mem: EngineMemory | None = None, eff: Efficiency = EFFICIENCY) -> Performance:
    """One replica of `setup.tp` GPUs at `load` (module docstring for the model)."""
    if (load.concurrency is None) == (load.request_rate_per_s is None):
        raise ValueError("give exactly one of concurrency and request_rate_per_s")
    mem = mem or engine_memory(m, gpu, setup)
    d = engine_defaults(setup.engine, gpu, setup.tp, setup.engine_version)
    seqs = setup.max_num_seqs or d.max_num_seqs
    chunk = setup.max_num_batched_tokens or d.max_num_batched_tokens
    s = step_model(m, gpu, setup, eff)
    inp, out = load.input_tokens, load.output_tokens
    cap = max_concurrency_at(m, setup, mem, inp, out, seqs)
    prefill_alone = s.prefill_s(inp, chunk)
    mixed = mixes_prefill(m, setup)
    notes: list[str] = []
    if cap < 1:
        return Performance(0.0, 0.0, 0.0, None, 0.0, 0.0, prefill_alone * 1000, "memory", cap, True,
                           ("the KV pool cannot hold one request of these lengths",))
    if load.concurrency is not None:
        users = load.concurrency
        running = min(users, cap)
        rate, ttft, tpot, bound = _closed_loop(s, running, inp, out, chunk, mixed)
        saturated = users > cap
        ttft_s: float | None = ttft
        if saturated:
            # users beyond the pool wait for a finished sequence: (users - running) / rate in the queue
            ttft_s = ttft + (users - running) / rate
            notes.append(f"{users:g} users, {cap:.0f} fit in the KV pool / max_num_seqs: the rest queue")
    else:
        offered = load.request_rate_per_s or 0.0
        running, rate, ttft_s, tpot, bound, saturated = _open_loop(s, offered, cap, inp, out, chunk, mixed)
        if saturated:
            wait = fluid_wait_s(offered, rate)
            ttft_s = (ttft_s or 0.0) + wait
            notes.append(f"{offered:g} req/s is above what one replica serves ({rate:.2f} req/s): the queue "
                         f"grows by {offered - rate:.2f} requests a second; over a {QUEUE_WINDOW_S:g} s peak the "
                         f"mean request waits {wait:.1f} s before its first token")
    step, _ = s.decode_s(running, inp + out / 2)
    return Performance(
        concurrency=running, request_rate_per_s=rate, output_tokens_per_s=rate * out,
        ttft_ms=None if ttft_s is None else ttft_s * 1000, tpot_ms=tpot * 1000, decode_step_ms=step * 1000,
        prefill_ms=prefill_alone * 1000, decode_bound=bound, max_concurrency=cap, saturated=saturated,
        notes=tuple(notes),
    )


def _open_loop(s: StepModel, offered: float, cap: float, inp: int, out: int, chunk: int,
               mixed: bool) -> tuple[float, float, float | None, float, Bound, bool]:
    """(sequences in flight, served rate, TTFT s or None, TPOT s, bound, saturated) at an offered rate."""
    top_rate, top_ttft, top_tpot, top_bound = _closed_loop(s, cap, inp, out, chunk, mixed, closed=False)
    if offered >= top_rate or offered * s.prefill_compute_s(inp) >= RHO_MAX:
        return cap, top_rate, top_ttft, top_tpot, top_bound, True
    lo, hi = 0.0, cap  # bisection on the users a closed loop needs to complete `offered` req/s
    for _ in range(_ITERATIONS):
        mid = (lo + hi) / 2
        rate, _, _, _ = _closed_loop(s, max(mid, 1e-6), inp, out, chunk, mixed, closed=False)
        lo, hi = (mid, hi) if rate < offered else (lo, mid)
        if hi - lo <= 1e-3 * max(hi, 1.0):
            break
    users = max(hi, 1e-6)
    rate, ttft, tpot, bound = _closed_loop(s, users, inp, out, chunk, mixed, closed=False)
    return users, offered, ttft, tpot, bound, False


def fluid_wait_s(offered: float, served: float, window_s: float = QUEUE_WINDOW_S) -> float:
    """Mean queueing delay over a peak of `window_s` seconds at `offered` req/s on a server completing `served`
    req/s (module docstring); 0 when it keeps up."""
    if served <= 0:
        return math.inf
    if offered <= served:
        return 0.0
    return (offered - served) * window_s / (2 * served)


def batch_run(m: ModelSpec, gpu: GpuSpec, setup: ServingSetup, requests: int, input_tokens: int,
              output_tokens: int, mem: EngineMemory | None = None, eff: Efficiency = EFFICIENCY) -> Performance:
    """`requests` prompts sent at once and run to completion (a static batch; benchmark_serving with an infinite
    rate and few prompts). Sequences grow to input + output together, so the pool holds fewer of them than in
    a steady state; the rest run in later waves. TTFT is the mean over the batch (a wave's prompts are
    prefilled one chunk budget after another); throughput = all output tokens / the makespan."""
    mem = mem or engine_memory(m, gpu, setup)
    d = engine_defaults(setup.engine, gpu, setup.tp, setup.engine_version)
    seqs = setup.max_num_seqs or d.max_num_seqs
    chunk = setup.max_num_batched_tokens or d.max_num_batched_tokens
    s = step_model(m, gpu, setup, eff)
    kv = kv_layout(m, setup)
    per_seq = kv.bytes_for_sequence(input_tokens + output_tokens)
    cap = min(float(seqs), mem.kv_cache_gib * GIB / per_seq) if per_seq > 0 else float(seqs)
    if cap < 1:
        return Performance(0.0, 0.0, 0.0, None, 0.0, 0.0, s.prefill_s(input_tokens, chunk) * 1000, "memory", cap,
                           True, ("the KV pool cannot hold one request of these lengths",))
    running = float(min(requests, math.floor(cap)))
    waves = requests / running  # later requests take the slots of finished ones: fractional waves
    prefill = s.prefill_s(running * input_tokens, chunk, input_tokens)
    step, bound = s.decode_s(running, input_tokens + output_tokens / 2)
    wave = prefill + max(0, output_tokens - 1) * step
    makespan = waves * wave
    ttft = prefill / 2 + s.prefill_s(input_tokens, chunk) / 2 + (waves - 1) * wave / 2
    notes = () if waves <= 1 else (f"{requests} requests, {running:.0f} fit in the KV pool at once",)
    return Performance(
        concurrency=running, request_rate_per_s=requests / makespan,
        output_tokens_per_s=requests * output_tokens / makespan, ttft_ms=ttft * 1000, tpot_ms=step * 1000,
        decode_step_ms=step * 1000, prefill_ms=s.prefill_s(input_tokens, chunk) * 1000, decode_bound=bound,
        max_concurrency=cap, saturated=waves > 1, notes=notes,
    )


def closed_run(m: ModelSpec, gpu: GpuSpec, setup: ServingSetup, users: float, requests: float, input_tokens: int,
               output_tokens: int, mem: EngineMemory | None = None, eff: Efficiency = EFFICIENCY) -> Performance:
    """`requests` prompts through `users` slots (a benchmark with --max-concurrency, or C users at once): the first
    `users` arrive together, a burst whose prompts wait for each other's prefill; the rest arrive as earlier ones
    finish, the steady closed loop. TTFT is the mean over all the requests; the rates are the steady loop's."""
    mem = mem or engine_memory(m, gpu, setup)
    steady = performance(m, gpu, setup, LoadPoint(input_tokens, output_tokens, concurrency=users), mem, eff)
    if requests <= 0 or users < 2 or steady.ttft_ms is None:
        return steady
    first = min(users, requests)
    burst = batch_run(m, gpu, setup, max(1, round(first)), input_tokens, output_tokens, mem, eff)
    if burst.ttft_ms is None:
        return steady
    share = first / max(requests, first)
    ttft = share * burst.ttft_ms + (1 - share) * steady.ttft_ms
    return replace(steady, ttft_ms=ttft)
