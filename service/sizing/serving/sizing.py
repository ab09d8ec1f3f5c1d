"""Sizing: a target load (concurrency or request rate, lengths, optional TTFT / TPOT limits) on one GPU type ->
GPUs per replica (tensor parallel, x pipeline stages over nodes) x replicas.

A pinned GPU count (`single=True`) is one deployment: one replica on exactly those GPUs runs the whole load, and
what it cannot hold waits (TTFT includes the queue), what it serves is its throughput; replicas are only what a
plan adds to meet a target, never what a pinned count is divided into.

For each tensor-parallel degree the engine can start with (weights + profiled peak leave room for one sequence
of max_model_len), one replica's capacity is the most users it holds (KV pool, max_num_seqs) while meeting the
latency limits: a bisection over users, since TTFT and TPOT grow with the load. Replicas = the load over that
capacity, rounded up; the degree with the fewest GPUs in all wins (ties: the lower latency). So the answer is
max(what memory needs, what throughput needs), and the headroom says how far the chosen deployment is from
each limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from service.catalog.schema import GpuSpec, ModelSpec
from service.sizing.serving import layout
from service.sizing.serving.engines import engine_defaults, engine_memory
from service.sizing.serving.perf import max_concurrency_at, performance
from service.sizing.serving.steps import EFFICIENCY, Efficiency
from service.sizing.serving.types import EngineMemory, LoadPoint, Performance, ServingSetup

TP_DEGREES = (1, 2, 4, 8, 16)
_BISECT = 18


@dataclass(frozen=True)
class ServingTarget:
    input_tokens: int
    output_tokens: int
    concurrency: float | None = None  # users in flight (closed loop)
    request_rate_per_s: float | None = None  # arrivals (open loop)
    ttft_ms: float | None = None  # limits; None = no limit
    tpot_ms: float | None = None

    @property
    def has_load(self) -> bool:
        return self.concurrency is not None or self.request_rate_per_s is not None


@dataclass(frozen=True)
class DeploymentSize:
    setup: ServingSetup  # tp = GPUs per replica
    replicas: int
    memory: EngineMemory  # one GPU of a replica
    performance: Performance  # one replica at its share of the load (at capacity when no load is given)
    memory_tp: int  # the fewest GPUs per replica that start
    replica_capacity_users: float  # users one replica holds within the limits
    limited_by: str  # memory | throughput | latency
    meets_limits: bool
    headroom: str
    headroom_zh: str
    rejected: tuple[tuple[int, str], ...] = field(default=())

    @property
    def gpus_per_replica(self) -> int:
        return self.setup.gpus

    @property
    def total_gpus(self) -> int:
        return self.setup.gpus * self.replicas

    @property
    def output_tokens_per_s(self) -> float:
        return self.performance.output_tokens_per_s * self.replicas


def valid_tp(m: ModelSpec, tp: int) -> bool:
    """vLLM/SGLang need the attention heads divisible by tp and KV heads divisible by, or dividing, tp."""
    return not [p for p in layout.problems(m, "vllm", "bf16", tp) if p.code in ("tp_heads", "tp_kv_heads")]


def _meets(p: Performance, t: ServingTarget) -> bool:
    if p.saturated or p.ttft_ms is None:
        return False
    return (t.ttft_ms is None or p.ttft_ms <= t.ttft_ms) and (t.tpot_ms is None or p.tpot_ms <= t.tpot_ms)


def _capacity_users(m: ModelSpec, gpu: GpuSpec, s: ServingSetup, mem: EngineMemory, t: ServingTarget,
                    cap: float, eff: Efficiency) -> float:
    """The most users one replica holds within the limits (0 when even one user misses them)."""
    def ok(users: float) -> bool:
        return _meets(performance(m, gpu, s, LoadPoint(t.input_tokens, t.output_tokens, users), mem, eff), t)

    if t.ttft_ms is None and t.tpot_ms is None:
        return cap
    if not ok(1.0):
        return 0.0
    if ok(cap):
        return cap
    lo, hi = 1.0, cap
    for _ in range(_BISECT):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
        if hi - lo < 0.5:
            break
    return lo


def _share(t: ServingTarget, replicas: int) -> LoadPoint:
    """One replica's share of the target load."""
    if t.concurrency is not None:
        return LoadPoint(t.input_tokens, t.output_tokens, concurrency=t.concurrency / replicas)
    return LoadPoint(t.input_tokens, t.output_tokens, request_rate_per_s=(t.request_rate_per_s or 0.0) / replicas)


def _option(m: ModelSpec, gpu: GpuSpec, s: ServingSetup, mem: EngineMemory, t: ServingTarget,
            eff: Efficiency, single: bool = False) -> tuple[int, float, Performance, str] | str:
    """(replicas, users per replica at capacity, performance at its share, limited_by) or why not. `single`: one
    replica carries the whole load (a pinned deployment)."""
    seqs = s.max_num_seqs or engine_defaults(s.engine, gpu, s.tp, s.engine_version).max_num_seqs
    cap = max_concurrency_at(m, s, mem, t.input_tokens, t.output_tokens, seqs)
    if cap < 1:
        return "the KV pool cannot hold one request of these lengths"
    if single:
        users = _capacity_users(m, gpu, s, mem, t, math.floor(cap), eff)
        perf = performance(m, gpu, s, _share(t, 1) if t.has_load else LoadPoint(t.input_tokens, t.output_tokens,
                                                                                max(users, 1.0)), mem, eff)
        limited = "memory" if perf.concurrency >= math.floor(cap) or not t.has_load else (
            "latency" if not _meets(perf, t) else "throughput")
        return 1, max(users, 1.0), perf, limited
    users = _capacity_users(m, gpu, s, mem, t, math.floor(cap), eff)
    if users < 1:
        return "misses the latency limits even with one user"
    limited = "memory" if users >= math.floor(cap) else "latency"
    at_capacity = performance(m, gpu, s, LoadPoint(t.input_tokens, t.output_tokens, users), mem, eff)
    if t.concurrency is not None:
        replicas = max(1, math.ceil(t.concurrency / users - 1e-9))
    elif t.request_rate_per_s is not None:
        replicas = max(1, math.ceil(t.request_rate_per_s / max(at_capacity.request_rate_per_s, 1e-9) - 1e-9))
        limited = "throughput" if limited == "memory" else limited
    else:
        return 1, users, at_capacity, "memory"
    perf = performance(m, gpu, s, _share(t, replicas), mem, eff)
    while not _meets(perf, t) and replicas < 10_000:  # the capacity is an estimate: step up until the share holds
        replicas += max(1, replicas // 8)
        perf = performance(m, gpu, s, _share(t, replicas), mem, eff)
    return replicas, users, perf, limited if replicas > 1 else "memory"


def degrees(max_gpus_per_replica: int, node_gpus: int = layout.NODE_GPUS) -> tuple[tuple[int, int], ...]:
    """(tp, pp) a replica may take: TP 1-8 inside a node; beyond one node, a node's GPUs per stage."""
    inside = tuple((d, 1) for d in TP_DEGREES if d <= min(max_gpus_per_replica, node_gpus))
    across = tuple((node_gpus, k) for k in (2, 4) if node_gpus * k <= max_gpus_per_replica)
    return inside + across


def size_deployment(m: ModelSpec, gpu: GpuSpec, target: ServingTarget, setup: ServingSetup = ServingSetup(),
                    max_gpus_per_replica: int = 8, fixed_tp: bool = False,
                    eff: Efficiency = EFFICIENCY, shorter_context_ok: bool = False,
                    single: bool = False) -> DeploymentSize | str:
    """GPUs per replica x replicas for `target` on `gpu` (module docstring). `fixed_tp`: only `setup.tp` x
    `setup.pp`. `shorter_context_ok`: the context was not asked for, so a pool too small for the model's full
    context is launched with the longest --max-model-len it holds (at least one request), as an operator would.
    `single`: one deployment on exactly those GPUs carries the load (no replicas). Returns the reason when no
    layout up to `max_gpus_per_replica` works."""
    shapes = ((setup.tp, setup.pp),) if fixed_tp else degrees(max_gpus_per_replica)
    rejected: list[tuple[int, str]] = []
    best: tuple[tuple[int, float], DeploymentSize] | None = None
    memory_tp = 0
    for tp, pp in shapes:
        if pp > 1 and best is not None and not fixed_tp:
            break  # several nodes per replica only when no single node serves it
        s = replace(setup, tp=tp, pp=pp)
        bad = layout.with_fixes(m, s.engine, s.weights, tp, pp)
        if bad:
            rejected.append((tp * pp, f"{bad[0].message} ({bad[0].fix})"))
            continue
        mem = engine_memory(m, gpu, s)
        if not mem.starts and mem.graph_capture_fails and setup.mem_fraction is None:
            s, mem = _room_for_graphs(m, gpu, s, mem)
        if not mem.starts and shorter_context_ok:
            s, mem = _room_for_requests(m, gpu, s, mem, target.input_tokens + target.output_tokens)
        if not mem.starts:
            rejected.append((tp * pp, mem.starts_reason))
            continue
        memory_tp = memory_tp or tp * pp
        got = _option(m, gpu, s, mem, target, eff, single)
        if isinstance(got, str):
            rejected.append((tp * pp, got))
            continue
        replicas, users, perf, limited = got
        size = DeploymentSize(s, replicas, mem, perf, memory_tp, users, limited, _meets(perf, target) or
                              not target.has_load, *_headroom(perf, users, replicas, target), tuple(rejected))
        key = (size.total_gpus, (perf.ttft_ms or math.inf) + target.output_tokens * perf.tpot_ms)
        if best is None or key < best[0]:
            best = (key, size)
        if not target.has_load:
            break  # memory only: the fewest GPUs that start
    if best is None:
        return "; ".join(f"{n} GPU{'s' if n > 1 else ''}: {why}" for n, why in rejected) or "no valid degree"
    return replace(best[1], memory_tp=memory_tp, rejected=tuple(rejected))


CONTEXT_STEP = 1024  # a lowered --max-model-len is rounded down to this
# nor lowered below this: a pool of a few thousand tokens starts but serves little (Qwen2.5-72B int4 on one L20
# holds ~2k tokens); such a card is reported as not starting, with the length it would take
MIN_USEFUL_CONTEXT = 8192


def _room_for_requests(m: ModelSpec, gpu: GpuSpec, s: ServingSetup, mem: EngineMemory,
                       request_tokens: int) -> tuple[ServingSetup, EngineMemory]:
    """The pool holds a request but not the model's full context: the longest --max-model-len it holds."""
    fits = mem.max_model_len_fits
    if s.max_model_len is None or fits >= s.max_model_len or fits < max(request_tokens, MIN_USEFUL_CONTEXT):
        return s, mem
    shorter = replace(s, max_model_len=max(request_tokens, fits // CONTEXT_STEP * CONTEXT_STEP))
    lowered = engine_memory(m, gpu, shorter)
    return (shorter, lowered) if lowered.starts else (s, mem)


def _room_for_graphs(m: ModelSpec, gpu: GpuSpec, s: ServingSetup,
                     mem: EngineMemory) -> tuple[ServingSetup, EngineMemory]:
    """vLLM at its default utilization leaves too little for CUDA graphs: the utilization an operator would set
    instead (the capture's memory and 0.25 GiB more left outside the budget), if the pool still serves."""
    short = mem.graph_gib - mem.graph_room_gib + 0.25
    util = math.floor((mem.mem_fraction - short / mem.device_total_gib) * 100) / 100
    if util <= 0.5:
        return s, mem
    lowered = replace(s, mem_fraction=util)
    return lowered, engine_memory(m, gpu, lowered)


def _headroom(p: Performance, users: float, replicas: int, t: ServingTarget) -> tuple[str, str]:
    kv = p.concurrency / p.max_concurrency if p.max_concurrency else 0.0
    load = p.concurrency / users if users else 0.0
    en = (f"{replicas} replica{'s' if replicas > 1 else ''}: each runs {p.concurrency:.1f} sequences, "
          f"{kv:.0%} of its KV pool ({p.max_concurrency:.0f} at these lengths) and {load:.0%} of the load it "
          "holds within the limits")
    zh = (f"{replicas} 个副本：每个副本同时处理 {p.concurrency:.1f} 个序列，占 KV 池的 {kv:.0%}"
          f"（此长度下最多 {p.max_concurrency:.0f} 个），占其在时延约束内可承载负载的 {load:.0%}")
    if not t.has_load:
        en = f"no load given: one replica holds {p.max_concurrency:.0f} sequences at these lengths"
        zh = f"未给出负载：单副本在此长度下最多同时处理 {p.max_concurrency:.0f} 个序列"
    return en, zh
