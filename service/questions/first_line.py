"""The first line answers what was asked (docs/question-types.md "The first line"): a type's answer opens with its
own headline (the plan's configuration, the count, the verdict), and when the question asked something else of the
same figures (how long, how much, how much memory, how many at once, how fast) this line says that first, from the
typed answer's own figures. None: the answer's own first line is already the answer.

    lead(answer, ph) -> str | None
"""

from __future__ import annotations

from service.planner.serving_types import ServingOption, ServingSizing
from service.planner.training_types import TrainingCandidate, TrainingPlan
from service.questions.base import AnswerBase
from service.questions.phrases import Phrases


def _ph(ph: Phrases, key: str, **fields: object) -> str:
    """The first-line phrase `key` (prompts' `lead` group), filled from `fields`."""
    return ph.group("lead").text(key, **fields)


def _n(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def _where(ph: Phrases, cloud: str, instance: str, count: float, gpu: str, nodes: int = 1) -> str:
    total = count * nodes
    return _ph(ph, "where", cloud=ph.name("cloud_names", cloud), instance=instance, count=f"{total:g}", gpu=gpu)


def _plan(answer: AnswerBase, asked: str, ph: Phrases) -> str | None:
    from service.questions.plan import PlanAnswer

    if not isinstance(answer, PlanAnswer) or not answer.plan.candidates:
        return None
    c: TrainingCandidate = answer.plan.candidates[0]
    where = _where(ph, c.cloud, c.instance_type, c.gpu_count, c.gpu_name, c.nodes)
    job = answer.plan.job
    epochs = job.epochs
    if job.data_basis == "assumed" and asked in ("plan", "time", "cost") and c.hours_per_1e8_tokens is not None:
        # no data size given: the rate on the pick, never a total for an invented corpus
        key = "plan_rate_quote" if c.cny_per_1e8_tokens is None else "plan_rate"  # priced on request: no "¥—"
        return _ph(ph, key, hours=_n(c.hours_per_1e8_tokens, 1), cny=_n(c.cny_per_1e8_tokens or 0), where=where,
                   note=job.data_note_zh if ph.zh else job.data_note)
    if asked == "time":
        per = c.training_hours / epochs if epochs else c.training_hours
        return _ph(ph, "plan_time", hours=_n(c.training_hours, 1), epochs=f"{epochs:g}", per=_n(per, 1),
                   where=where)
    if asked == "cost":
        if c.total_cost_cny is None:
            return _ph(ph, "plan_cost_quote", where=where, hours=_n(c.training_hours, 1))
        return _ph(ph, "plan_cost", cny=_n(c.total_cost_cny), hours=_n(c.training_hours, 1), where=where,
                   billing=ph.name("billing_names", str(c.billing)))
    if asked == "plan":
        return _picks(answer.plan, ph)
    if asked == "host" and answer.host is not None and c.vcpus is not None and c.memory_gib is not None:
        h = answer.host  # (a host whose vCPU / RAM is unpublished, HCCPNV5, has no 'you have' to compare)
        return _ph(ph, "plan_host", vcpus=h.vcpus, ram=_n(h.ram_gib), disk=_n(h.disk_gb),
                   ckpt=_n(h.checkpoint_gb, 1), where=where, have_vcpus=c.vcpus * c.nodes,
                   have_ram=_n(c.memory_gib * c.nodes))
    return None


def _picks(plan: TrainingPlan, ph: Phrases) -> str | None:
    """The configuration in one line: each cloud's pick, its hours and cost, and whether it meets the deadline and
    the budget asked."""
    parts: list[str] = []
    for cloud, instance in plan.picks.items():
        c = next((x for x in plan.candidates if x.cloud == cloud and x.instance_type == instance), None)
        if c is None:
            continue
        cost = (_ph(ph, "pick_quote") if c.total_cost_cny is None else
                _ph(ph, "pick_cost", cny=_n(c.total_cost_cny), billing=ph.name("billing_names", str(c.billing))))
        verdicts = []
        if c.meets_deadline is not None and plan.workload.deadline_hours:
            verdicts.append(_ph(ph, "pick_deadline_ok" if c.meets_deadline else "pick_deadline_no",
                                hours=f"{plan.workload.deadline_hours:g}"))
        if c.within_budget is not None and plan.workload.budget_cny:
            verdicts.append(_ph(ph, "pick_budget_ok" if c.within_budget else "pick_budget_no"))
        parts.append(_ph(ph, "pick", where=_where(ph, c.cloud, c.instance_type, c.gpu_count, c.gpu_name, c.nodes),
                         hours=_n(c.training_hours, 1), cost=cost, verdicts="".join(verdicts)))
    if not parts:
        return None
    return _ph(ph, "picks", picks=("；" if ph.zh else "; ").join(parts))


def _serving_figures(answer: AnswerBase) -> tuple[ServingSizing | None, ServingOption | None]:
    from service.questions.serving import ServingAnswer

    if not isinstance(answer, ServingAnswer):
        return None, None
    top = answer.plan.candidates[0] if answer.plan is not None and answer.plan.candidates else None
    return (top.sizing if top is not None else None), top


def _serving(answer: AnswerBase, asked: str, ph: Phrases) -> str | None:
    from service.questions.serving import ServingAnswer, cards_to_start

    if not isinstance(answer, ServingAnswer):
        return None
    inf = answer.inference
    sizing, top = _serving_figures(answer)
    if inf is not None and not inf.starts:
        # it does not start: the verdict, then what would (more cards for the weights, or smaller weights)
        need = cards_to_start(inf)  # the engine's own fix ('--tensor-parallel-size 2') or the weights' count
        if need and inf.weights in ("bf16", "fp16"):
            return _ph(ph, "srv_no_start", count=inf.gpus, gpu=inf.gpu_name, weights=_n(inf.weights_gib_per_gpu, 1),
                       need=need)
        return None
    clouds = answer.workload.clouds
    if inf is not None and clouds and (answer.plan is None or not answer.plan.candidates):
        names = [ph.name("cloud_names", c) for c in clouds]  # 'and on JD Cloud?' for a card that cloud does not rent
        return _ph(ph, "srv_not_rented", clouds="、".join(names) if ph.zh else " or ".join(names), gpu=inf.gpu_name)
    if sizing is not None and sizing.large and (sizing.driver or sizing.driver_zh):
        return sizing.driver_zh if ph.zh else sizing.driver  # a large deployment says what drove it first
    if asked == "cost":
        if answer.usage_cost_cny_per_month is not None and answer.usage_hours_per_month and top is not None:
            return _ph(ph, "srv_cost_usage", cny=_n(answer.usage_cost_cny_per_month),
                       hours=f"{answer.usage_hours_per_month:g}",
                       where=_where(ph, top.cloud, top.instance_type, top.gpu_count, top.gpu, top.nodes))
        if top is not None and top.cost_per_month_cny is not None:
            per_m = top.cny_per_million_output_tokens
            return _ph(ph, "srv_cost" if per_m is not None else "srv_cost_month", cny=_n(top.cost_per_month_cny),
                       billing=ph.name("billing_names", top.billing),
                       where=_where(ph, top.cloud, top.instance_type, top.gpu_count, top.gpu, top.nodes),
                       per_m=_n(per_m or 0, 2))
        return None
    if inf is not None:
        gpus, tps, ttft, tpot = inf.gpus * inf.replicas, inf.output_tokens_per_s, inf.ttft_ms, inf.tpot_ms
        conc, weights, kv, ctx = inf.max_concurrency_at_load, inf.weights_gib_per_gpu, inf.kv_cache_gib_per_gpu, \
            inf.max_model_len
        gpu, lengths = inf.gpu_name, (inf.input_tokens, inf.output_tokens)
    elif sizing is not None:
        gpus, tps, ttft, tpot = sizing.total_gpus, sizing.output_tokens_per_s, sizing.ttft_ms, sizing.tpot_ms
        conc, weights, kv, ctx = sizing.max_concurrency_at_load * sizing.replicas, sizing.weights_gib_per_gpu, \
            sizing.kv_cache_gib_per_gpu, sizing.max_model_len
        gpu, lengths = sizing.gpu_name, (sizing.input_tokens, sizing.output_tokens)
    else:
        return None
    load = answer.workload.concurrency or answer.workload.request_rate
    at = (_ph(ph, "at_load_conc", n=f"{answer.workload.concurrency:g}") if answer.workload.concurrency
          else _ph(ph, "at_load_rate", n=f"{answer.workload.request_rate:g}") if answer.workload.request_rate
          else _ph(ph, "at_capacity"))
    on = _ph(ph, "on_gpus", count=gpus, gpu=gpu)
    if asked == "throughput" and tps is not None:
        return _ph(ph, "srv_throughput", tps=_n(tps), at=at, on=on)
    if asked == "latency" and ttft is not None:
        return _ph(ph, "srv_latency", ttft=_n(ttft), tpot=_n(tpot or 0.0, 1), at=at, on=on)
    if asked == "concurrency" and conc is not None and not load:
        return _ph(ph, "srv_concurrency", n=_n(conc), on=on, inp=lengths[0], out=lengths[1])  # the lengths sized
    if asked == "memory":
        return _ph(ph, "srv_memory", total=_n((weights + kv) * gpus, 1), weights=_n(weights * gpus, 1),
                   kv=_n(kv * gpus, 1), ctx=f"{ctx:,}", on=on)
    return None


def _fit(answer: AnswerBase, asked: str, ph: Phrases) -> str | None:
    from service.questions.feasibility import FeasibilityAnswer
    from service.questions.min_gpus import MinGpusAnswer

    if isinstance(answer, FeasibilityAnswer) and asked == "time" and answer.fits:
        return _ph(ph, "fit_time", count=answer.gpu_count, gpu=answer.gpu_name, hours=_n(answer.training_hours, 1))
    if isinstance(answer, MinGpusAnswer) and asked == "memory" and answer.gpu is not None:
        return _ph(ph, "min_memory", need=_n(answer.single_gpu_gib, 1), model=answer.model.name,
                   method=ph.name("method_names", answer.strategy.method))
    return None


def _catalog(answer: AnswerBase, asked: str, ph: Phrases) -> str | None:
    from service.questions.catalog import CatalogAnswer
    from service.questions.savings import SavingsAnswer

    if isinstance(answer, SavingsAnswer) and answer.billing is not None:
        spot = answer.billing.spot[0] if answer.billing.ask == "spot" and answer.billing.spot else None
        if spot is not None:  # 'spot would save what': the saving an hour first, and whether it is an estimate
            return _ph(ph, "spot_saves", save=_n(spot.on_demand_cny - spot.spot_cny, 2),
                       pct=round(100 * (1 - spot.ratio)), od=_n(spot.on_demand_cny, 2), spot=_n(spot.spot_cny, 2),
                       what=f"{ph.name('cloud_names', spot.cloud)} {spot.instance_type}",
                       note=_ph(ph, "spot_saves_estimate") if spot.confidence == "estimate" else "")
        answer = answer.billing  # a billing saving with no job: the catalog's break-even says it

    if isinstance(answer, CatalogAnswer) and answer.missing:
        return _ph(ph, "cat_missing", names=("、" if ph.zh else ", ").join(answer.missing))
    if not isinstance(answer, CatalogAnswer) or answer.breakeven is None or not answer.breakeven.pairs:
        return None
    p = answer.breakeven.pairs[0]
    if p.winner is None or p.on_demand_month_cny is None or p.monthly_month_cny is None:
        return None
    units = f"{p.units} × " if p.units and p.units > 1 else ""
    fields = {"od": _n(p.on_demand_month_cny), "mo": _n(p.monthly_month_cny), "be": _n(p.break_even_hours),
              "hours": f"{p.hours_per_month or 0:g}", "save": _n(abs(p.saving_month_cny or 0.0)),
              "what": f"{ph.name('cloud_names', p.cloud)} {units}{p.instance_type}"}
    if asked == "savings":
        key = "bill_saves" if p.winner == "monthly" else "bill_costs_more"
        return _ph(ph, key, **fields)
    return _ph(ph, "bill_monthly" if p.winner == "monthly" else "bill_on_demand", **fields)


def lead(answer: AnswerBase, ph: Phrases) -> str | None:
    """The line that answers `answer.asked` first, when the type's own first line answers something else."""
    asked = answer.asked
    if not asked:
        return None
    for part in (_plan, _serving, _fit, _catalog):
        line = part(answer, asked, ph)
        if line:
            return line
    return None
