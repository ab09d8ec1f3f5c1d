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

Bounds: replicas never exceed what the load can occupy: one user per replica at most for a concurrency
(`ceil(C)`), and for a request rate the requests in flight when each runs alone (Little's law:
`ceil(R x one request's latency)`). A latency limit no replica meets even with one request (a 64k-token prompt
cannot reach its first token in 1 s on any number of H20s) is said and the load is sized without it, never
answered by adding replicas. Each size checks itself: what its replicas serve within the limits against what the
load asks (`capacity_ratio`, flagged above OVERSIZE_FACTOR), and carries the sentence that says what drove the
count (`driver`), which an answer states before a large figure.
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
OVERSIZE_FACTOR = 3.0  # a deployment serving more than this multiple of its load (within the limits) is oversized


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
    driver: str = ""  # what drove the count, with its figures (an answer says it before a large count)
    driver_zh: str = ""
    demand_output_tokens_per_s: float = 0.0  # what the load asks of the deployment
    capacity_output_tokens_per_s: float = 0.0  # what its replicas serve within the limits
    latency_infeasible: str = ""  # the limit no replica meets even alone, said (empty: none)

    @property
    def capacity_ratio(self) -> float:
        """Capacity within the limits over the load's demand: ~1 when the count follows the load."""
        return self.capacity_output_tokens_per_s / self.demand_output_tokens_per_s \
            if self.demand_output_tokens_per_s > 0 else 1.0

    @property
    def oversized(self) -> bool:
        return self.replicas > 1 and self.capacity_ratio > OVERSIZE_FACTOR

    @property
    def gpus_per_replica(self) -> int:
        return self.setup.gpus

    @property
    def total_gpus(self) -> int:
        return self.setup.gpus * self.replicas

    @property
    def output_tokens_per_s(self) -> float:
        return self.performance.output_tokens_per_s * self.replicas


class Refusal(str):
    """Why nothing was sized: the English (the string itself, as every caller reads it) and its Chinese (`zh`)."""

    zh: str

    def __new__(cls, en: str, zh: str) -> Refusal:
        self = super().__new__(cls, en)
        self.zh = zh
        return self


def in_chinese(reason: str) -> str:
    """A reason's Chinese twin when it carries one (a Refusal), else the reason as it is."""
    return reason.zh if isinstance(reason, Refusal) else reason


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


@dataclass(frozen=True)
class _Sized:
    replicas: int
    users: float  # users one replica holds within the limits (at the memory cap when a limit is infeasible)
    perf: Performance  # one replica at its share of the load
    limited_by: str
    capacity: Performance  # one replica at `users`
    infeasible: str = ""  # the limit no replica meets alone, in words
    infeasible_zh: str = ""


def max_useful_replicas(t: ServingTarget, alone: Performance) -> int:
    """The most replicas the load can occupy: one user each for a concurrency; for a rate, the requests in flight
    when each runs alone (Little's law), at least one."""
    if t.concurrency is not None:
        return max(1, math.ceil(t.concurrency - 1e-9))
    rate = t.request_rate_per_s or 0.0
    latency_s = ((alone.ttft_ms or alone.prefill_ms) + max(0, t.output_tokens - 1) * alone.tpot_ms) / 1000
    return max(1, math.ceil(rate * latency_s - 1e-9))


def _infeasible(p: Performance, t: ServingTarget) -> tuple[str, str]:
    """Which limit one request alone misses, in words."""
    if t.ttft_ms is not None and (p.ttft_ms is None or p.ttft_ms > t.ttft_ms):
        return (f"TTFT <= {t.ttft_ms:,.0f} ms cannot be met: one {t.input_tokens:,}-token prompt alone takes "
                f"{p.ttft_ms or p.prefill_ms:,.0f} ms to its first token on this replica, and more replicas do not "
                "shorten it (a faster GPU, more GPUs per replica or a shorter prompt do)",
                f"首字延迟 ≤ {t.ttft_ms:,.0f} ms 无法满足：单个 {t.input_tokens:,} token 的请求独占一个副本也要 "
                f"{p.ttft_ms or p.prefill_ms:,.0f} ms 才出首字，增加副本数不会缩短它（需要更快的 GPU、每副本更多 GPU 或更短的输入）")
    return (f"TPOT <= {t.tpot_ms or 0:,.0f} ms cannot be met: one request alone decodes at {p.tpot_ms:,.1f} ms per "
            "token on this replica, and more replicas do not speed it up",
            f"每 token 时延 ≤ {t.tpot_ms or 0:,.0f} ms 无法满足：单个请求独占一个副本时每 token 也要 {p.tpot_ms:,.1f} ms，"
            "增加副本数不会加快")


def _option(m: ModelSpec, gpu: GpuSpec, s: ServingSetup, mem: EngineMemory, t: ServingTarget,
            eff: Efficiency, single: bool = False) -> _Sized | str:
    """Replicas, users per replica within the limits, one replica's performance at its share, what limited it
    (or why not). `single`: one replica carries the whole load (a pinned deployment)."""
    seqs = s.max_num_seqs or engine_defaults(s.engine, gpu, s.tp, s.engine_version).max_num_seqs
    cap = max_concurrency_at(m, s, mem, t.input_tokens, t.output_tokens, seqs)
    if cap < 1:
        return Refusal("the KV pool cannot hold one request of these lengths", "KV 缓存池放不下一条这种长度的请求")
    if single:
        users = _capacity_users(m, gpu, s, mem, t, math.floor(cap), eff)
        perf = performance(m, gpu, s, _share(t, 1) if t.has_load else LoadPoint(t.input_tokens, t.output_tokens,
                                                                                max(users, 1.0)), mem, eff)
        limited = "memory" if perf.concurrency >= math.floor(cap) or not t.has_load else (
            "latency" if not _meets(perf, t) else "throughput")
        return _Sized(1, max(users, 1.0), perf, limited, perf)
    users = _capacity_users(m, gpu, s, mem, t, math.floor(cap), eff)
    infeasible = ("", "")
    if users < 1:
        # no number of replicas meets the limit: say so and size the load without it
        alone = performance(m, gpu, s, LoadPoint(t.input_tokens, t.output_tokens, 1.0), mem, eff)
        infeasible = _infeasible(alone, t)
        t = replace(t, ttft_ms=None, tpot_ms=None)
        users = float(math.floor(cap))
    limited = "memory" if users >= math.floor(cap) else "latency"
    at_capacity = performance(m, gpu, s, LoadPoint(t.input_tokens, t.output_tokens, users), mem, eff)
    if not t.has_load:
        return _Sized(1, users, at_capacity, "memory", at_capacity, *infeasible)
    alone = performance(m, gpu, s, LoadPoint(t.input_tokens, t.output_tokens, 1.0), mem, eff)
    most = max_useful_replicas(t, alone)
    if t.concurrency is not None:
        replicas = max(1, math.ceil(t.concurrency / users - 1e-9))
    else:
        replicas = max(1, math.ceil((t.request_rate_per_s or 0.0) / max(at_capacity.request_rate_per_s, 1e-9)
                                    - 1e-9))
        limited = "throughput" if limited == "memory" else limited
    replicas = min(replicas, most)
    perf = performance(m, gpu, s, _share(t, replicas), mem, eff)
    while not _meets(perf, t) and replicas < most:  # the capacity is an estimate: step up until the share holds
        replicas = min(most, replicas + max(1, replicas // 8))
        perf = performance(m, gpu, s, _share(t, replicas), mem, eff)
    return _Sized(replicas, users, perf, limited if replicas > 1 else "memory", at_capacity, *infeasible)


def _demand_and_capacity(t: ServingTarget, got: _Sized) -> tuple[float, float]:
    """(output tokens/s the load asks, output tokens/s the replicas serve within the limits)."""
    capacity = got.replicas * got.capacity.output_tokens_per_s
    if t.request_rate_per_s is not None:
        return t.request_rate_per_s * t.output_tokens, capacity
    if t.concurrency is not None:  # a closed loop asks what its users generate, each at its replica's pace
        return got.replicas * got.perf.output_tokens_per_s, capacity
    return capacity, capacity


def _driver(s: ServingSetup, gpu: GpuSpec, mem: EngineMemory, t: ServingTarget, got: _Sized) -> tuple[str, str]:
    """What drove the count, with its figures (English, Chinese)."""
    n, r = s.gpus, got.replicas
    replica = f"each replica ({n} x {gpu.name})"
    replica_zh = f"每个副本（{n} 张 {gpu.name}）"
    lengths = f"{t.input_tokens:,} in + {t.output_tokens:,} out"
    lengths_zh = f"输入 {t.input_tokens:,} + 输出 {t.output_tokens:,} tokens"
    if got.infeasible:
        head, head_zh = got.infeasible + "; ", got.infeasible_zh + "；"
    else:
        head = head_zh = ""
    if not t.has_load:
        return (head + f"no load given: one replica of {n} x {gpu.name}, the fewest GPUs that start",
                head_zh + f"未给出负载：一个副本 {n} 张 {gpu.name}，是能启动的最少 GPU 数")
    load = (f"{t.concurrency:g} users" if t.concurrency is not None else f"{t.request_rate_per_s:g} req/s")
    load_zh = (f"{t.concurrency:g} 个并发用户" if t.concurrency is not None else f"每秒 {t.request_rate_per_s:g} 个请求")
    if got.limited_by == "memory":
        en = (f"{replica} holds {got.users:.0f} sequence(s) of {lengths} tokens in its KV pool "
              f"({mem.kv_capacity_tokens:,} tokens, {mem.kv_cache_gib:.1f} GiB per GPU after "
              f"{mem.weights_gib:.1f} GiB of weights): {load} need {r} replica(s)")
        zh = (f"{replica_zh}的 KV 缓存（{mem.kv_capacity_tokens:,} tokens，权重 {mem.weights_gib:.1f} GiB 之后每卡剩 "
              f"{mem.kv_cache_gib:.1f} GiB）只能同时放下 {got.users:.0f} 个{lengths_zh}的序列：{load_zh}需要 {r} 个副本")
    elif got.limited_by == "throughput":
        en = (f"{replica} serves {got.capacity.request_rate_per_s:.2f} req/s at {lengths} tokens: {load} need {r} "
              "replica(s)")
        zh = f"{replica_zh}在{lengths_zh}下每秒处理 {got.capacity.request_rate_per_s:.2f} 个请求：{load_zh}需要 {r} 个副本"
    else:
        limit = " and ".join(x for x in (f"TTFT <= {t.ttft_ms:,.0f} ms" if t.ttft_ms else "",
                                         f"TPOT <= {t.tpot_ms:,.0f} ms" if t.tpot_ms else "") if x)
        en = f"{replica} keeps {limit} up to {got.users:.0f} users: {load} need {r} replica(s)"
        zh = f"{replica_zh}在 {limit} 内最多承载 {got.users:.0f} 个用户：{load_zh}需要 {r} 个副本"
    return head + en, head_zh + zh


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
    rejected_zh: list[tuple[int, str]] = []
    best: tuple[tuple[bool, int, float], DeploymentSize] | None = None
    memory_tp = 0
    for tp, pp in shapes:
        if pp > 1 and best is not None and not fixed_tp and not (best[1].limited_by == "memory"
                                                                   and best[1].replicas > 1):
            break  # several nodes per replica only when no single node serves it, or its KV pool is what multiplies
        s = replace(setup, tp=tp, pp=pp)
        bad = layout.with_fixes(m, s.engine, s.weights, tp, pp)
        if bad:
            rejected.append((tp * pp, f"{bad[0].message} ({bad[0].fix})"))
            rejected_zh.append((tp * pp, f"`{bad[0].message}`（{bad[0].fix_zh or bad[0].fix}）"))
            continue
        mem = engine_memory(m, gpu, s)
        if not mem.starts and mem.graph_capture_fails and setup.mem_fraction is None:
            s, mem = _room_for_graphs(m, gpu, s, mem)
        if not mem.starts and shorter_context_ok:
            s, mem = _room_for_requests(m, gpu, s, mem, target.input_tokens + target.output_tokens)
        if not mem.starts:
            rejected.append((tp * pp, mem.starts_reason))
            rejected_zh.append((tp * pp, mem.starts_reason_zh or mem.starts_reason))
            continue
        memory_tp = memory_tp or tp * pp
        got = _option(m, gpu, s, mem, target, eff, single)
        if isinstance(got, str):
            rejected.append((tp * pp, got))
            rejected_zh.append((tp * pp, in_chinese(got)))
            continue
        if got.limited_by == "memory" and got.replicas > 1 and setup.mem_fraction is None and s.engine == "vllm":
            s, mem, got = _room_for_users(m, gpu, s, mem, got, target, eff)
        perf = got.perf
        demand, capacity = _demand_and_capacity(target, got)
        driver, driver_zh = _driver(s, gpu, mem, target, got)
        size = DeploymentSize(s, got.replicas, mem, perf, memory_tp, got.users, got.limited_by,
                              (_meets(perf, target) or not target.has_load) and not got.infeasible,
                              *_headroom(perf, got.replicas, target, demand, capacity), tuple(rejected), driver, driver_zh,
                              demand, capacity, got.infeasible)
        # a degree whose replicas meet the limits beats one that cannot meet them at any count
        key = (bool(got.infeasible), size.total_gpus, (perf.ttft_ms or math.inf) + target.output_tokens * perf.tpot_ms)
        if best is None or key < best[0]:
            best = (key, size)
        if not target.has_load:
            break  # memory only: the fewest GPUs that start
    if best is None:
        return Refusal("; ".join(f"{n} GPU{'s' if n > 1 else ''}: {why}" for n, why in rejected) or "no valid degree",
                       "；".join(f"{n} 张卡：{why}" for n, why in rejected_zh) or "没有可用的并行方式")
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


ROOMY_UTILIZATION = 0.95  # what operators set when the KV pool, not the GPUs, multiplies the replicas


def _room_for_users(m: ModelSpec, gpu: GpuSpec, s: ServingSetup, mem: EngineMemory, got: _Sized,
                    t: ServingTarget, eff: Efficiency) -> tuple[ServingSetup, EngineMemory, _Sized]:
    """The KV pool caps each replica's users and so multiplies the replicas: vLLM at --gpu-memory-utilization 0.95
    instead, when it still starts and captures its CUDA graphs and needs fewer replicas."""
    roomy = replace(s, mem_fraction=ROOMY_UTILIZATION)
    more = engine_memory(m, gpu, roomy)
    if not more.starts or more.graph_capture_fails:
        return s, mem, got
    better = _option(m, gpu, roomy, more, t, eff)
    if isinstance(better, str) or better.replicas >= got.replicas:
        return s, mem, got
    return roomy, more, better


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


def _headroom(p: Performance, replicas: int, t: ServingTarget, demand: float, capacity: float) -> tuple[str, str]:
    """How far the deployment is from its limits: each replica's share of its KV pool, and the load as the engine
    checks it (`capacity_ratio`): the output tokens/s the load asks over what the replicas serve within the limits."""
    kv = p.concurrency / p.max_concurrency if p.max_concurrency else 0.0
    load = demand / capacity if capacity > 0 else 0.0
    per = f"{demand / replicas:,.0f} / {capacity / replicas:,.0f} tokens/s"
    en = (f"{replicas} replica{'s' if replicas > 1 else ''}: each runs {p.concurrency:.1f} sequences, "
          f"{kv:.0%} of its KV pool ({p.max_concurrency:.0f} at these lengths) and {load:.0%} of the output it "
          f"serves within the limits ({per} per replica)")
    zh = (f"{replicas} 个副本：每个副本同时处理 {p.concurrency:.1f} 个序列，占 KV 池的 {kv:.0%}"
          f"（此长度下最多 {p.max_concurrency:.0f} 个），输出达到其在时延约束内输出能力的 {load:.0%}（每副本 {per}）")
    if not t.has_load:
        en = f"no load given: one replica holds {p.max_concurrency:.0f} sequences at these lengths"
        zh = f"未给出负载：单副本在此长度下最多同时处理 {p.max_concurrency:.0f} 个序列"
    return en, zh
