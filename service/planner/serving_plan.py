"""Serving workload x catalog -> every instance that serves it on Tencent Cloud and JD Cloud, costed for 24x7 use
and ranked; rejected instances keep their reason.

Per instance: the engine sizes GPUs per replica (the instance's GPUs at most, tensor parallel inside a node; a
model no single 8-GPU node serves spans 2 or 4 such nodes as pipeline stages) x replicas for the load on the
instance's GPU (service/sizing/serving/sizing.py); the deployment rents ceil(replicas / replicas per instance)
instances and runs a replica on every GPU group it pays for. Costs reuse the training planner's price queries
and billing rules (service/planner/costing.py) for 730 hours a month; yuan per million output tokens = cost per
hour / (output tokens per hour / 1e6) at the stated load (at the deployment's capacity when no load is given).

The context is what the requests need (input + output, rounded up), unless one is asked for. Every chosen cloud
is answered: a cloud with no instance that serves the load says why (its closest instance's reason). An option
10x dearer per output token than the best is flagged and never picked. With BF16 weights the same load is planned
with FP8 and INT4 weights too (`variants`), on the cards that run them.
"""

from __future__ import annotations

import math
import re
from datetime import date

from service.catalog.loader import Catalog
from service.catalog.queries import resolve_gpu
from service.catalog.schema import GpuSpec, InstanceRow, ModelSpec
from service.labels import price_when
from service.planner.costing import (
    HOURS_PER_MONTH,
    QUOTE_LINKS,
    choose_billing,
    cost_lines,
    newer_dict,
    price_notes,
    quote,
    quote_notes,
    reference_notes,
)
from service.planner.generic import is_estimated
from service.planner.serving_launch import launch
from service.planner.serving_size import (
    cost_per_million,
    fp16_note,
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
    ServingVariant,
)
from service.serving_workload import ServingWorkload
from service.sizing.host import Note, gpu_notes
from service.sizing.serving import layout
from service.sizing.serving.engines import engine_defaults
from service.sizing.serving.sizing import in_chinese
from service.sizing.serving.support import fp8_weight_only, unsupported
from service.sizing.serving.versions import engine_label

_STATUS_ZH = {"allowlist": "白名单售卖", "invite_only": "邀测", "sold_out": "售罄", "limited": "限量"}


def _notes(ns: list[Note]) -> list[NoteOut]:
    return [NoteOut(code=n.code, severity=n.severity, message=n.en, message_zh=n.zh) for n in ns]


def _serving_notes(w: ServingWorkload, gpu: GpuSpec, inst: InstanceRow, s: ServingSizing) -> list[Note]:
    out: list[Note] = []
    if fp8_weight_only(gpu, s.weights):
        out.append(Note("fp8_weight_only", f"{gpu.name} has no FP8 tensor cores: FP8 weights run weight-only "
                        "(W8A16, the Marlin kernel), halving memory but not compute.", f"{gpu.name} 不支持 FP8 计算："
                        "FP8 权重以仅权重量化（W8A16，Marlin 内核）运行，省显存但不提速。", "info"))
    if s.weights == "fp16" and not gpu.supports_bf16:
        en, zh = fp16_note(gpu)
        out.append(Note("fp16_served", en, zh, "info"))
    if s.latency_infeasible:
        out.append(Note("latency_infeasible", s.driver.split("; ")[0] + ".", s.driver_zh.split("；")[0] + "。"))
    elif not s.meets_limits:
        out.append(Note("latency_limit", "The load misses the latency limits on this option.",
                        "该配置在此负载下达不到时延要求。"))
    if s.oversized:
        out.append(Note("oversized", f"These replicas serve {s.capacity_output_tokens_per_s:,.0f} output tokens/s "
                        f"within the limits, {s.capacity_output_tokens_per_s / max(s.demand_output_tokens_per_s, 1):.1f}x "
                        f"the {s.demand_output_tokens_per_s:,.0f} the load asks: {s.driver}.",
                        f"这些副本在时延约束内可输出 {s.capacity_output_tokens_per_s:,.0f} tokens/s，是负载所需 "
                        f"{s.demand_output_tokens_per_s:,.0f} 的 {s.capacity_output_tokens_per_s / max(s.demand_output_tokens_per_s, 1):.1f} 倍："
                        f"{s.driver_zh}。"))
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
    if s.gpus_per_replica > per_node:  # a replica over several nodes (pipeline stages)
        nodes_per_replica = math.ceil(s.gpus_per_replica / per_node)
        nodes, replicas = s.replicas * nodes_per_replica, s.replicas
    else:
        replicas_per_node = per_node // s.gpus_per_replica
        nodes = math.ceil(s.replicas / replicas_per_node)
        replicas = nodes * replicas_per_node
    lines = cost_lines(inst, nodes, HOURS_PER_MONTH, cat.prices)
    line, bill_notes = choose_billing(lines, w.billing)
    warnings = [*bill_notes, *_serving_notes(w, gpu, inst, s)]
    warnings += reference_notes(gpu.id, gpu.id, cat.reference_prices)  # other clouds, a reference only
    if replicas > s.replicas:
        spare = replicas - s.replicas
        warnings.append(Note("spare_replicas", f"{spare} replica(s) beyond what the load needs run on GPUs this "
                             "instance brings anyway: more headroom and lower latency than the figures shown.",
                             f"实例自带的 GPU 可多跑 {spare} 个副本（超出负载所需）：余量更大，时延低于所示数字。", "info"))
    if s.pipeline_parallel > 1 and not inst.rdma:
        warnings.append(Note("pp_no_rdma", f"Each replica spans {s.pipeline_parallel} instances without RDMA: the "
                             "pipeline hops go over the VPC network (fine for PP's small activations, slow for TP).",
                             f"每个副本跨 {s.pipeline_parallel} 台实例且没有 RDMA：流水线级间走 VPC 网络（PP 传输量小尚可，"
                             "TP 跨机则很慢）。", "info"))
    warnings += gpu_notes(gpu, per_node, max(1, s.pipeline_parallel), inst.rdma)
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
                         promo=p.promo, content_as_of=p.content_as_of.isoformat() if p.content_as_of else None,
                         content_basis=p.content_basis, newer=newer_dict(line.newer),
                         date_en=price_when(p, "en"), date_zh=price_when(p, "zh"))
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
                 max_price_age_days: int = 180, variants: bool = True) -> ServingPlan:
    """Every instance on the chosen clouds sized, costed (24x7) and ranked for `w` (module docstring).
    `variants`: with BF16 weights (asked or assumed), plan FP8 and INT4 too."""
    today = today or date.today()
    m, notes = resolve_serving_model(w, cat.models)
    # BF16 asked or assumed (a plan's echoed workload states the dtype it assumed): FP8 and INT4 beside it
    variants = variants and (w.weights or m.released_dtype) == "bf16" and m.released_dtype == "bf16"
    w, released = released_weights(w, m)
    notes += released
    _, _, defaults = setup_and_target(w, m, for_plan=True)
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
        per_node = int(inst.gpu_count)
        reach = per_node * MAX_NODES_PER_REPLICA if per_node >= layout.NODE_GPUS else per_node
        sized = size_on(m, gpus[inst.gpu], w, reach, for_plan=True)
        if isinstance(sized, str):
            rejected.append({"instance_type": inst.instance_type, "cloud": inst.cloud, "reason": sized,
                             "reason_zh": in_chinese(sized)})
            continue
        cands.append(_option(w, cat, m, inst, gpus[inst.gpu], sized, today, max_price_age_days))
    ranked, dear = _flag_dear(_rank(cands, w.objective))
    picks: dict[str, str] = {}
    for c in ranked:
        if c.instance_type not in dear:
            picks.setdefault(c.cloud, c.instance_type)
    no_fit, no_fit_zh = _no_fit(w, cat, ranked, picks, rejected)
    infeasible = infeasible_zh = None
    if not ranked:
        infeasible = ("No instance on the chosen clouds serves this workload: see the reasons under rejected; "
                      "try int4 or fp8 weights, a shorter max_model_len, or a larger GPU.")
        infeasible_zh = "所选云上没有能承载该负载的实例（原因见 rejected）：可尝试 int4/fp8 量化、缩短 max_model_len 或更大显存的 GPU。"
    label = engine_label(w.engine)
    return ServingPlan(
        workload=w, model=ModelRef(id=m.id, name=m.name, params_b=m.params_published_b,
                                   active_params_b=m.active_params_b, source=m.source,
                                   estimated=is_estimated(m)),
        candidates=ranked, picks=picks, rejected=rejected, no_fit=no_fit, no_fit_zh=no_fit_zh,
        variants=_variants(w, cat, m, today, max_price_age_days) if variants else [],
        engine_assumed=label[0], engine_assumed_zh=label[1],
        assumptions=[*[en for en, _ in notes], label[0] + " assumed."],
        assumptions_zh=[*[zh for _, zh in notes], f"按 {label[1]}估算。"], infeasible=infeasible,
        infeasible_zh=infeasible_zh,
    )


MAX_NODES_PER_REPLICA = 4  # a model no 8-GPU node serves may span 2 or 4 (pipeline stages)
DEAR_FACTOR = 10.0  # an option this many times the best yuan per output token is flagged, never picked
_CLOUD_ZH = {"tencent": "腾讯云", "jdcloud": "京东云"}
_CLOUD_EN = {"tencent": "Tencent Cloud", "jdcloud": "JD Cloud"}


def _flag_dear(ranked: list[ServingOption]) -> tuple[list[ServingOption], set[str]]:
    """Options at >= DEAR_FACTOR x the best yuan per million output tokens: warned, moved after the others."""
    priced = [c.cny_per_million_output_tokens for c in ranked if c.cny_per_million_output_tokens]
    if not priced:
        return ranked, set()
    best = min(priced)
    dear = {c.instance_type for c in ranked
            if c.cny_per_million_output_tokens and c.cny_per_million_output_tokens >= DEAR_FACTOR * best}
    out = []
    for c in ranked:
        if c.instance_type in dear:
            times = (c.cny_per_million_output_tokens or 0) / best
            c = c.model_copy(update={"warnings": [*c.warnings, NoteOut(
                code="dear", severity="warning",
                message=f"{times:.0f}x the best option's yuan per million output tokens (¥{best:,.2f}): not picked.",
                message_zh=f"每百万输出 token 成本是最优方案（¥{best:,.2f}）的 {times:.0f} 倍：不推荐。")]})
        out.append(c)
    return [c for c in out if c.instance_type not in dear] + [c for c in out if c.instance_type in dear], dear


def _no_fit(w: ServingWorkload, cat: Catalog, ranked: list[ServingOption], picks: dict[str, str],
            rejected: list[dict[str, str]]) -> tuple[dict[str, str], dict[str, str]]:
    """Why each chosen cloud without a pick has none: every option 10x dearer, or its closest instance's reason
    (the one with the most GPU memory in a node)."""
    clouds = w.clouds or sorted({r.cloud for r in cat.instances})
    mem = {g.id: g.memory_gib for g in cat.gpus}
    by_type = {r.instance_type: r for r in cat.instances}
    en: dict[str, str] = {}
    zh: dict[str, str] = {}
    for cloud in clouds:
        if cloud in picks:
            continue
        dear = next((c for c in ranked if c.cloud == cloud), None)
        if dear is not None:
            en[cloud] = (f"{_CLOUD_EN.get(cloud, cloud)}: only options at 10x or more the best yuan per million output "
                         f"tokens (its best, {dear.instance_type}, ¥{dear.cny_per_million_output_tokens:,.2f}).")
            zh[cloud] = (f"{_CLOUD_ZH.get(cloud, cloud)}：能跑的方案每百万输出 token 成本都在最优方案的 10 倍以上（其中最便宜的 "
                         f"{dear.instance_type} 为 ¥{dear.cny_per_million_output_tokens:,.2f}），不推荐。")
            continue
        own = [r for r in rejected if r.get("cloud") == cloud and r["instance_type"] in by_type]
        if not own and w.gpu:
            en[cloud] = f"{_CLOUD_EN.get(cloud, cloud)} rents no {w.gpu}."
            zh[cloud] = f"{_CLOUD_ZH.get(cloud, cloud)}不出租 {w.gpu}。"
            continue
        if not own:
            en[cloud] = f"{_CLOUD_EN.get(cloud, cloud)}: no instance with whole GPUs for this model."
            zh[cloud] = f"{_CLOUD_ZH.get(cloud, cloud)}：没有可用的整卡实例。"
            continue
        row = by_type[max(own, key=lambda r: (by_type[r["instance_type"]].gpu_count
                                               * mem.get(by_type[r["instance_type"]].gpu, 0)))["instance_type"]]
        why = next(r for r in own if r["instance_type"] == row.instance_type)
        last = re.split(r"; (?=\d+ GPUs?: )", why["reason"])[-1]
        last_zh = re.split(r"；(?=\d+ 张卡：)", why.get("reason_zh") or why["reason"])[-1]
        en[cloud] = (f"{_CLOUD_EN.get(cloud, cloud)}: no instance serves it; its largest, {row.instance_type} "
                     f"({row.gpu_count:g}x {row.gpu}): {last}")
        zh[cloud] = (f"{_CLOUD_ZH.get(cloud, cloud)}：没有能承载的实例；其中最大的 {row.instance_type}"
                     f"（{row.gpu_count:g} 张 {row.gpu}）：{last_zh}")
    return en, zh


_VARIANT_WEIGHTS = ("fp8", "int4")


def _variants(w: ServingWorkload, cat: Catalog, m: ModelSpec, today: date, max_age: int) -> list[ServingVariant]:
    """The same load with FP8 and INT4 weights: each cloud's pick (the cards that cannot run a dtype drop out)."""
    out: list[ServingVariant] = []
    gpus = {g.id: g for g in cat.gpus}
    for dtype in _VARIANT_WEIGHTS:
        plan = plan_serving(w.model_copy(update={"weights": dtype}), cat, today, max_age, variants=False)
        for cloud, itype in plan.picks.items():
            c = next(x for x in plan.candidates if x.instance_type == itype)
            weight_only = fp8_weight_only(gpus[c.gpu], dtype)
            checkpoint = ("an FP8 checkpoint, or --quantization fp8 on the BF16 one" if dtype == "fp8"
                          else "an AWQ / GPTQ int4 checkpoint (group 128)")
            out.append(ServingVariant(weights=dtype, cloud=cloud, instance_type=itype, gpu=c.gpu, nodes=c.nodes,
                                      total_gpus=c.total_gpus, cost_per_month_cny=c.cost_per_month_cny,
                                      cny_per_million_output_tokens=c.cny_per_million_output_tokens,
                                      weight_only=weight_only, checkpoint=checkpoint))
    return out


def capped(plan: ServingPlan, max_candidates: int) -> ServingPlan:
    """The plan with its first `max_candidates` options and each cloud's pick (the API's ?max_candidates, the MCP
    tool, the chat's card): the figures are the plan's, only the list is shorter."""
    keep = set(plan.picks.values())
    head = plan.candidates[:max_candidates]
    head += [c for c in plan.candidates[max_candidates:] if c.instance_type in keep and c not in head]
    return plan.model_copy(update={"candidates": head})
