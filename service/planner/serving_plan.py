"""Serving workload x catalog -> every instance that serves it on Tencent Cloud and JD Cloud, costed for 24x7 use
and ranked; rejected instances keep their reason.

Per instance: the engine sizes GPUs per replica (at most the instance's GPUs: a replica stays in one node) x
replicas for the load on the instance's GPU (service/sizing/serving/sizing.py); the deployment rents
ceil(replicas / replicas per instance) instances and runs a replica on every GPU group it pays for. Costs reuse
the training planner's price queries and billing rules (service/planner/costing.py) for 730 hours a month;
yuan per million output tokens = cost per hour / (output tokens per hour / 1e6) at the stated load (at the
deployment's capacity when no load is given).
"""

from __future__ import annotations

import math
import re
from datetime import date

from service.catalog.loader import Catalog
from service.catalog.queries import resolve_gpu
from service.catalog.schema import GpuSpec, InstanceRow, ModelSpec
from service.planner.costing import (
    HOURS_PER_MONTH,
    QUOTE_LINKS,
    choose_billing,
    cost_lines,
    price_notes,
    quote,
    quote_notes,
)
from service.planner.generic import is_estimated
from service.planner.serving_launch import launch
from service.planner.serving_size import (
    cost_per_million,
    released_weights,
    resolve_serving_model,
    setup_and_target,
    size_on,
)
from service.planner.serving_types import (
    ModelRef,
    NoteOut,
    PriceRef,
    ServingOption,
    ServingPlan,
    ServingSizing,
)
from service.serving_workload import ServingWorkload
from service.sizing.host import Note, gpu_notes
from service.sizing.serving.engines import engine_defaults
from service.sizing.serving.support import unsupported

_STATUS_ZH = {"allowlist": "白名单售卖", "invite_only": "邀测", "sold_out": "售罄", "limited": "限量"}


def _notes(ns: list[Note]) -> list[NoteOut]:
    return [NoteOut(code=n.code, severity=n.severity, message=n.en, message_zh=n.zh) for n in ns]


def _serving_notes(w: ServingWorkload, gpu: GpuSpec, inst: InstanceRow, s: ServingSizing) -> list[Note]:
    out: list[Note] = []
    if w.weights == "fp8" and not gpu.supports_fp8:
        out.append(Note("fp8_weight_only", f"{gpu.name} has no FP8 tensor cores: FP8 weights run weight-only "
                        "(Marlin), halving memory but not compute.", f"{gpu.name} 不支持 FP8 计算：FP8 权重以仅权重"
                        "量化（Marlin）运行，省显存但不提速。", "info"))
    if not s.meets_limits:
        out.append(Note("latency_limit", "The load misses the latency limits on this option.",
                        "该配置在此负载下达不到时延要求。"))
    if s.saturated:
        out.append(Note("saturated", "The load exceeds what these replicas serve: requests queue.",
                        "负载超过这些副本的处理能力：请求会排队。"))
    if inst.sale_status in _STATUS_ZH:
        out.append(Note("sale_status", f"{inst.family} is {inst.sale_status.replace('_', ' ')}: ask sales first.",
                        f"{inst.family} 当前为{_STATUS_ZH[inst.sale_status]}，请先联系售前确认资源。"))
    return out


def _option(w: ServingWorkload, cat: Catalog, m: ModelSpec, inst: InstanceRow, gpu: GpuSpec, s: ServingSizing,
            today: date, max_age: int) -> ServingOption:
    per_node = int(inst.gpu_count)
    replicas_per_node = per_node // s.gpus_per_replica
    nodes = math.ceil(s.replicas / replicas_per_node)
    replicas = nodes * replicas_per_node
    lines = cost_lines(inst, nodes, HOURS_PER_MONTH, cat.prices)
    line, bill_notes = choose_billing(lines, w.billing)
    warnings = [*bill_notes, *_serving_notes(w, gpu, inst, s)]
    if replicas > s.replicas:
        spare = replicas - s.replicas
        warnings.append(Note("spare_replicas", f"{spare} replica(s) beyond what the load needs run on GPUs this "
                             "instance brings anyway: more headroom and lower latency than the figures shown.",
                             f"实例自带的 GPU 可多跑 {spare} 个副本（超出负载所需）：余量更大，时延低于所示数字。", "info"))
    warnings += gpu_notes(gpu, per_node, 1, inst.rdma)  # a replica stays in one node: no cross-node traffic
    per_hour = per_month = None
    price = None
    estimate = None
    link = QUOTE_LINKS.get(inst.cloud, "")
    if line is None:
        q = quote(inst, nodes, HOURS_PER_MONTH, cat.prices)
        warnings += quote_notes(q, inst)
        link = q.link
        if q.low_cny is not None and q.high_cny is not None:
            estimate = [round(q.low_cny, 2), round(q.high_cny, 2)]
    else:
        warnings += price_notes(line, inst.cloud, today, max_age)
        per_month = line.monthly_cny
        per_hour = per_month / HOURS_PER_MONTH
        p = line.price
        price = PriceRef(price_cny=p.price_cny, unit=p.unit, billing=line.billing, region=p.region, source=p.source,
                         as_of=p.as_of.isoformat() if p.as_of else None,
                         captured=p.captured.isoformat() if p.captured else None, confidence=p.confidence,
                         promo=p.promo)
    return ServingOption(
        cloud=inst.cloud, instance_type=inst.instance_type, family=inst.family, gpu=gpu.id,
        gpu_count=inst.gpu_count, nodes=nodes, replicas=replicas, gpus_per_replica=s.gpus_per_replica,
        total_gpus=nodes * per_node, vcpus=inst.vcpus, memory_gib=inst.memory_gib, sale_status=inst.sale_status,
        sizing=s, billing=line.billing if line else "on_request",
        cost_per_hour_cny=None if per_hour is None else round(per_hour, 2),
        cost_per_month_cny=None if per_month is None else round(per_month, 2),
        monthly_cny_by_billing={b: round(c.monthly_cny, 2) for b, c in lines.items()},
        cny_per_million_output_tokens=_round(cost_per_million(per_hour, s.output_tokens_per_s)),
        price=price, price_on_request=line is None, estimate_month_cny=estimate,
        quote_link=link,
        within_budget=None if per_month is None or w.budget_cny is None else per_month <= w.budget_cny,
        launch=launch(m, s, nodes, replicas, per_node, engine_defaults("sglang", gpu, s.gpus_per_replica).mem_fraction,
                      unsupported("sglang", gpu, s.weights, s.kv_dtype)),
        warnings=_notes(warnings),
    )


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


def _rank(cands: list[ServingOption], objective: str) -> list[ServingOption]:
    def cost(c: ServingOption) -> float:
        return c.cost_per_month_cny if c.cost_per_month_cny is not None else math.inf

    def latency(c: ServingOption) -> float:
        ttft = c.sizing.ttft_ms if c.sizing.ttft_ms is not None else math.inf
        return ttft + c.sizing.output_tokens * c.sizing.tpot_ms

    def ok(c: ServingOption) -> bool:
        return c.sizing.meets_limits and c.within_budget is not False

    if objective == "fastest":
        return sorted(cands, key=lambda c: (not ok(c), c.sizing.ttft_ms or math.inf, c.sizing.tpot_ms, cost(c)))
    if objective == "balanced":
        priced = [cost(c) for c in cands if c.cost_per_month_cny]
        low_cost = min(priced, default=1.0)
        low_lat = min((latency(c) for c in cands), default=1.0) or 1.0
        return sorted(cands, key=lambda c: (not ok(c), c.price_on_request, math.log(max(cost(c), 1e-9) / low_cost)
                                            + math.log(max(latency(c), 1e-9) / low_lat) if c.cost_per_month_cny
                                            else math.inf))
    return sorted(cands, key=lambda c: (not ok(c), c.price_on_request, cost(c), latency(c)))


_FORM = re.compile(r"-(\d+G)(-.*)?$|-(SXM\d?|PCIE)$")
_MEMORY_GIVEN = re.compile(r"\d+\s*(g|gb|gib)\b|sxm|pcie", re.IGNORECASE)


def _gpu_family(name: str, cat: Catalog) -> set[str]:
    """'A100' pins every A100 memory size and form factor the clouds sell; 'A100 80G' or 'A100 SXM' that one."""
    g, _ = resolve_gpu(name, cat.gpus)
    if _MEMORY_GIVEN.search(name):
        return {g.id}
    stem = _FORM.sub("", g.id)
    return {x.id for x in cat.gpus if _FORM.sub("", x.id) == stem}


def plan_serving(w: ServingWorkload, cat: Catalog, today: date | None = None,
                 max_price_age_days: int = 180) -> ServingPlan:
    """Every instance on the chosen clouds sized, costed (24x7) and ranked for `w` (module docstring)."""
    today = today or date.today()
    m, notes = resolve_serving_model(w, cat.models)
    w, released = released_weights(w, m)
    notes += released
    _, _, defaults = setup_and_target(w, m)
    notes += defaults
    pinned = _gpu_family(w.gpu, cat) if w.gpu else set()
    gpus = {g.id: g for g in cat.gpus}
    cands: list[ServingOption] = []
    rejected: list[dict[str, str]] = []
    for inst in cat.instances:
        if (w.clouds and inst.cloud not in w.clouds) or inst.stale:
            continue
        if pinned and inst.gpu not in pinned:
            continue
        if inst.is_slice:
            rejected.append({"instance_type": inst.instance_type, "reason": "a vGPU slice: serving needs whole GPUs"})
            continue
        sized = size_on(m, gpus[inst.gpu], w, int(inst.gpu_count))
        if isinstance(sized, str):
            rejected.append({"instance_type": inst.instance_type, "reason": sized})
            continue
        cands.append(_option(w, cat, m, inst, gpus[inst.gpu], sized, today, max_price_age_days))
    ranked = _rank(cands, w.objective)
    picks: dict[str, str] = {}
    for c in ranked:
        picks.setdefault(c.cloud, c.instance_type)
    infeasible = infeasible_zh = None
    if not ranked:
        infeasible = ("No instance on the chosen clouds serves this workload: see the reasons under rejected; "
                      "try int4 or fp8 weights, a shorter max_model_len, or a larger GPU.")
        infeasible_zh = "所选云上没有能承载该负载的实例（原因见 rejected）：可尝试 int4/fp8 量化、缩短 max_model_len 或更大显存的 GPU。"
    return ServingPlan(
        workload=w, model=ModelRef(id=m.id, name=m.name, params_b=m.params_published_b,
                                   active_params_b=m.active_params_b, source=m.source,
                                   estimated=is_estimated(m)),
        candidates=ranked, picks=picks, rejected=rejected, assumptions=[en for en, _ in notes],
        assumptions_zh=[zh for _, zh in notes], infeasible=infeasible, infeasible_zh=infeasible_zh,
    )


def capped(plan: ServingPlan, max_candidates: int) -> ServingPlan:
    """The plan with its first `max_candidates` options and each cloud's pick (the API's ?max_candidates, the MCP
    tool, the chat's card): the figures are the plan's, only the list is shorter."""
    keep = set(plan.picks.values())
    head = plan.candidates[:max_candidates]
    head += [c for c in plan.candidates[max_candidates:] if c.instance_type in keep and c not in head]
    return plan.model_copy(update={"candidates": head})
