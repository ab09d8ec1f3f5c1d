"""Question type `serving`: how many GPUs to serve a model, how many concurrent requests a GPU holds, whether a
quantised model starts on a card, tokens/s, latency and ¥ per million tokens ('上线一个70B的对话服务要几张卡',
'单卡A10能开多少并发', 'int4量化后单卡够不够'). Engine: service/planner/serving_*.py over service/sizing/serving."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field

from service.labels import price_when
from service.planner.lenient import catalog_for
from service.planner.questions.fit import gpu_for
from service.planner.serving_inference import InferenceResult, inference
from service.planner.serving_plan import plan_serving
from service.planner.serving_types import ServingOption, ServingPlan, ServingSizing
from service.questions.base import AnswerBase, Ask, Context, Missing, Phrases, QuestionModule
from service.questions.parts import Part, Said
from service.questions.summary_text import figure, plural, yuan
from service.questions.view import (
    is_memory_class,
    job_fields,
    serving_fields,
    subject_count,
    subject_gpu,
)
from service.serving_workload import ServingWorkload
from service.workload import Workload

_ENGINES = ("vllm", "sglang", "trtllm", "lmdeploy")
_SERVING_KEYS = ("weights", "kv_dtype", "max_model_len", "input_tokens", "output_tokens", "concurrency",
                 "request_rate", "ttft_ms", "tpot_ms")


def cards_to_start(inf: InferenceResult) -> int | None:
    """The cards the weights need when the pinned count does not start: the engine's tensor-parallel fix
    ('--tensor-parallel-size 2') or the count for weights beyond one node."""
    flags = (inf.fix or "").split()
    tp = int(flags[1]) if len(flags) == 2 and flags[0] == "--tensor-parallel-size" and flags[1].isdigit() else None
    need = inf.min_gpus_for_weights or tp
    return need if need and need > inf.gpus else None


class ServingArgs(ServingWorkload):
    question: str | None = Field(default=None, description="the question type (kept for follow-ups)")
    also: str | None = Field(default=None, description="another reading of the question, to mention")
    engine_asked: str | None = Field(default=None, description="an engine named that is sized as vLLM (Ollama ...)")
    asked: str | None = Field(default=None, description="what the question asks (the frame's `asked`: count, "
                              "memory, concurrency, throughput, latency, cost ...): the first line answers it")
    usage_hours_per_month: float | None = Field(default=None, gt=0, le=744, description="hours a month it runs "
                                                "(office hours only): the cost is on-demand for those hours")


class Placed(Part):
    """Where the deployment's top option runs."""

    cloud: str
    instance_type: str
    nodes: int


class ServingFigures(Part):
    """The deployment in its headline figures: the pinned GPU's as deployed, else the plan's top option's."""

    gpu: str | None = None
    gpus_per_replica: int | None = None
    replicas: int | None = None
    total_gpus: int | None = None
    starts: bool
    min_gpus_for_weights: int | None = None
    max_concurrency: float | None = None
    kv_capacity_tokens: int | None = None
    output_tokens_per_s: float | None = None
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    cost_cny_per_month: float | None = None
    cny_per_million_tokens: float | None = None
    instance: Placed | None = None


class ServingAnswer(AnswerBase):
    kind: Literal["serving"] = "serving"
    workload: ServingWorkload
    engine_asked: str | None = None
    said: list[Said] = Field(default_factory=list)
    inference: InferenceResult | None = Field(default=None, description="the pinned GPU x count, as deployed")
    plan: ServingPlan | None = Field(default=None, description="where to rent it, per cloud")
    usage_hours_per_month: float | None = None
    usage_cost_cny_per_month: float | None = Field(default=None, description="on demand for the hours it runs")

    def figures(self) -> ServingFigures:
        """The headline figures (the evals' and the summary's)."""
        inf, plan = self.inference, self.plan
        top = plan.candidates[0] if plan is not None and plan.candidates else None
        s = (inf.sizing if inf is not None else None) or (top.sizing if top is not None else None)
        return ServingFigures(
            gpu=(inf.gpu if inf is not None else None) or (s.gpu if s is not None else None),
            gpus_per_replica=(s.gpus_per_replica if s is not None else None) or (inf.gpus if inf is not None else None),
            replicas=s.replicas if s is not None else None,
            total_gpus=(s.total_gpus if s is not None else None) or (inf.min_gpus_for_weights if inf is not None
                                                                     else None),
            starts=inf.starts if inf is not None else top is not None,
            min_gpus_for_weights=inf.min_gpus_for_weights if inf is not None else None,
            max_concurrency=(s.max_concurrency if s is not None else None) or (inf.max_concurrency if inf is not None
                                                                               else None),
            kv_capacity_tokens=(s.kv_capacity_tokens if s is not None else None) or (
                inf.kv_capacity_tokens if inf is not None else None),
            output_tokens_per_s=s.output_tokens_per_s if s is not None else None,
            ttft_ms=s.ttft_ms if s is not None else None, tpot_ms=s.tpot_ms if s is not None else None,
            cost_cny_per_month=top.cost_per_month_cny if top is not None else None,
            cny_per_million_tokens=top.cny_per_million_output_tokens if top is not None else None,
            instance=Placed(cloud=top.cloud, instance_type=top.instance_type, nodes=top.nodes)
            if top is not None else None)

    def facts(self) -> dict[str, float]:
        s = self.figures()
        keys = {"gpus_per_replica": "gpus_per_replica", "replicas": "replicas", "max_concurrency": "concurrency",
                "output_tokens_per_s": "tokens_per_s", "ttft_ms": "ttft_ms", "cost_cny_per_month": "cny_per_month",
                "kv_capacity_tokens": "kv_tokens", "total_gpus": "count"}
        out = {name: float(v) for k, name in keys.items() if isinstance(v := getattr(s, k), (int, float))
               and not isinstance(v, bool)}
        inf = self.inference
        if inf is not None and not inf.starts and (need := cards_to_start(inf)) is not None:
            out["count"] = float(need)  # it does not start on the cards asked: the count it takes
        if self.workload.input_tokens is not None:  # requests of stated lengths: how many of those run at once
            top = self.plan.candidates[0].sizing if self.plan is not None and self.plan.candidates else None
            at_load = (inf.max_concurrency_at_load * inf.replicas if inf is not None and inf.max_concurrency_at_load
                       is not None else top.max_concurrency_at_load * top.replicas if top is not None else None)
            if at_load is not None:
                out["concurrency"] = float(at_load)
        if inf is not None:
            out["weights_gib"] = inf.weights_gib_per_gpu * inf.gpus
            out["per_gpu_gib"] = inf.weights_gib_per_gpu + inf.kv_cache_gib_per_gpu
        elif self.plan is not None and self.plan.candidates:
            s0 = self.plan.candidates[0].sizing
            out["weights_gib"] = s0.weights_gib_per_gpu * s0.gpus_per_replica
            out["per_gpu_gib"] = s0.weights_gib_per_gpu + s0.kv_cache_gib_per_gpu
        return out


def _run(ctx: Context, args: ServingArgs) -> ServingAnswer:
    w = ServingWorkload.model_validate(args.model_dump(
        exclude={"question", "also", "engine_asked", "asked", "usage_hours_per_month"}, exclude_unset=True))
    cat, said = catalog_for(ctx.catalog, Workload(model=w.model, params_b=w.params_b))  # 'llama70b': by its name
    age, asked = ctx.max_price_age_days, w  # the workload as asked (its GPU as named), sized with the catalog's id
    inf: InferenceResult | None = None
    plan: ServingPlan | None = None
    if w.gpu:
        g, gpu_said = gpu_for(cat, w.gpu)
        w = w.model_copy(update={"gpu": g.id})
        inf = inference(w, cat)
        said = [*said, *([gpu_said] if gpu_said else [])]
        if any(r.gpu == g.id for r in cat.instances):
            plan = plan_serving(w, cat, max_price_age_days=age)
    else:
        plan = plan_serving(w, cat, max_price_age_days=age)
    answer = ServingAnswer(workload=asked, engine_asked=args.engine_asked, said=list(said), inference=inf, plan=plan)
    top = answer.plan.candidates[0] if answer.plan is not None and answer.plan.candidates else None
    if args.usage_hours_per_month and top is not None and top.cost_per_hour_cny is not None:
        hourly = top.monthly_cny_by_billing.get("on_demand")
        per_hour = hourly / 730 if hourly else top.cost_per_hour_cny
        answer.usage_hours_per_month = args.usage_hours_per_month
        answer.usage_cost_cny_per_month = round(per_hour * args.usage_hours_per_month, 2)
    return answer


def _route(a: Ask) -> ServingArgs | Missing:
    f = a.frame
    fields = job_fields(f, serving_fields)
    if isinstance(fields, Missing):
        return fields
    engine = f.setup.knobs.engine
    if engine in _ENGINES:
        fields["engine"] = engine
    elif engine:
        fields["engine_asked"] = engine
        if engine == "ollama" and not fields.get("weights"):
            fields["weights"] = "int4"  # Ollama's library tags are 4-bit (q4_K_M) GGUF unless a tag says otherwise
    gpu = subject_gpu(f)
    if gpu:
        fields["gpu"] = gpu
        fields["gpus"] = subject_count(f)
        if fields["gpus"] is None and f.asked == "fits" and not f.setup.hardware.nodes and not is_memory_class(gpu):
            fields["gpus"] = 1  # '3060 12G 能起来吗', 'is my 3090 ok?': whether one card does, the verdict first
    if f.constraints.usage_hours_per_month:
        fields["usage_hours_per_month"] = f.constraints.usage_hours_per_month
    if fields.get("concurrency") and fields.get("request_rate"):
        fields.pop("concurrency" if f.load.arrival != "burst" else "request_rate")
    return ServingArgs.model_validate({**{k: v for k, v in fields.items() if v is not None}, "asked": f.asked})


def _n(x: float | None, digits: int = 0) -> str:
    return "—" if x is None else f"{x:,.{digits}f}"


def _figures(s: ServingSizing, ph: Phrases, loaded: bool) -> str:
    """The memory arithmetic, then throughput and latency at the stated load (or with the replicas full)."""
    return ph.text(
        "srv_figures" if loaded else "srv_figures_full",
        weights=_n(s.weights_gib_per_gpu, 1), kv=_n(s.kv_cache_gib_per_gpu, 1), tokens=f"{s.kv_capacity_tokens:,}",
        conc=_n(s.max_concurrency, 1), ctx=s.max_model_len, tps=_n(s.output_tokens_per_s), ttft=_n(s.ttft_ms),
        tpot=_n(s.tpot_ms, 1), inp=s.input_tokens, out=s.output_tokens, load=_n(s.concurrency),
        at_load=_n(s.max_concurrency_at_load))


def _option_line(o: ServingOption, ph: Phrases) -> str:
    cost = (ph.text("srv_cost", hour=_n(o.cost_per_hour_cny, 2), month=_n(o.cost_per_month_cny),
                    cpm=_n(o.cny_per_million_output_tokens, 2), billing=ph.name("billing_names", o.billing))
            if o.cost_per_hour_cny is not None
            else f"{ph.name('billing_names', 'on_request', '')}{'：' if ph.zh else ': '}{o.quote_link}")
    return ph.text("srv_option", cloud=ph.name("cloud_names", o.cloud), instance=o.instance_type,
                   count=f"{o.gpu_count:g}", gpu=o.gpu, nodes=o.nodes, cost=cost)


def _need(s: ServingSizing, model: str, ph: Phrases, plan: ServingPlan | None = None) -> str:
    """The count, then the machines it is on when a cloud rents it ('几台机器': one 8-card machine, or two)."""
    pp = s.pipeline_parallel or 1
    line = ph.text("srv_need_pp" if pp > 1 else "srv_need", total=s.total_gpus, gpu=s.gpu_name,
                   tp=s.tensor_parallel if pp > 1 else s.gpus_per_replica, pp=pp, replicas=s.replicas, model=model,
                   weights=ph.name("weights_names", s.weights), engine=ph.name("engine_names", s.engine))
    return line + _machines(plan, s.gpu, ph)


def _machines(plan: ServingPlan | None, gpu: str, ph: Phrases) -> str:
    """' That is one Tencent Cloud PNV5b.64XLARGE768 machine (8 cards).': the machines the count is on, when a cloud
    rents it."""
    top = next((c for c in plan.candidates if c.gpu == gpu), None) if plan is not None else None
    if top is None:
        return ""
    key = "srv_machines_one" if top.nodes == 1 else "srv_machines"
    return ph.text(key, nodes=top.nodes, instance=top.instance_type, count=f"{top.gpu_count:g}",
                   cloud=ph.name("cloud_names", top.cloud))


def _variants(plan: ServingPlan, ph: Phrases) -> list[str]:
    """FP8 / INT4 beside a BF16 plan, and each cloud without a pick, said."""
    out: list[str] = []
    if plan.variants:
        out += ["", ph.text("srv_variants")]
        for v in plan.variants:
            note = ph.text("srv_variant_weight_only", gpu=v.gpu) if v.weight_only else ""
            key = "srv_variant" if v.cost_per_month_cny is not None else "srv_variant_quote"
            out.append(ph.text(key, weights=ph.name("weights_names", v.weights),
                               cloud=ph.name("cloud_names", v.cloud), instance=v.instance_type, nodes=v.nodes,
                               gpus=v.total_gpus, gpu=v.gpu, month=_n(v.cost_per_month_cny),
                               cpm=_n(v.cny_per_million_output_tokens, 2), note=note))
    return out


def _no_fit(plan: ServingPlan, ph: Phrases) -> list[str]:
    reasons = (plan.no_fit_zh if ph.zh else plan.no_fit) or {}
    return [ph.text("srv_no_fit", reason=r) for r in reasons.values()]


def _picks(plan: ServingPlan, ph: Phrases) -> list[str]:
    by_type = {c.instance_type: c for c in plan.candidates}
    return [ph.text("srv_picks"), *[_option_line(by_type[t], ph) for t in plan.picks.values()], *_no_fit(plan, ph)]


def _render_plan(plan: ServingPlan, ph: Phrases, loaded: bool) -> list[str]:
    if not plan.candidates:
        return [ph.text("srv_none", reason=plan.infeasible_zh if ph.zh else plan.infeasible)]
    top = plan.candidates[0]
    s = top.sizing
    lines = [_need(s, plan.model.name, ph, plan), _figures(s, ph, loaded), s.headroom_zh if ph.zh else s.headroom, ""]
    lines += _picks(plan, ph)
    lines += _variants(plan, ph)
    lines += ["", ph.text("srv_launch"), "```bash", top.launch.vllm, "```"]
    return lines


def _render_pinned(lines: list[str], inf: InferenceResult, w: ServingWorkload, ph: Phrases,
                   plan: ServingPlan | None) -> None:
    """The pinned GPU x count as deployed, added to `lines`: the count, the layout that runs, or whether it starts
    (and at the load asked, whether it holds it: then that verdict is the answer's first line)."""
    sized = inf.sizing
    weights, engine = ph.name("weights_names", inf.weights), ph.name("engine_names", inf.engine)
    if sized and not w.gpus:  # 'how many H800s': the count first
        lines.append(_need(sized, inf.model.name, ph, plan))
    elif inf.min_gpus_for_weights:  # 'how many A100s for the full R1': more than one node
        n = inf.min_gpus_for_weights
        lines.append(ph.text("srv_multi_node", n=n, nodes=math.ceil(n / 8), gpu=inf.gpu_name, model=inf.model.name,
                             weights=weights, total=_n(inf.weights_gib_per_gpu * inf.gpus, 0)))
    elif inf.refused_layout and sized:  # 'TP6' for 64 heads: the engine's words, the layout that runs
        message = inf.refused_layout.split(": ", 1)[-1].strip('"').rstrip(".")
        lines.append(ph.text("srv_pinned_layout", tp0=inf.refused_layout.split(":")[0].removeprefix("TP").split(" ")[0],
                             message=message, count=inf.gpus, gpu=inf.gpu_name, flags=inf.fix or "",
                             model=inf.model.name, engine=engine, weights=weights,
                             at_load=_n(inf.max_concurrency_at_load), inp=inf.input_tokens, out=inf.output_tokens))
    else:
        key = "srv_pinned_no" if not inf.starts else "srv_pinned_short" if inf.context_lowered_from \
            else "srv_pinned_yes"
        lines.append(ph.text(key, full=f"{inf.context_lowered_from or 0:,}", ctx_f=f"{inf.max_model_len:,}",
                             count=inf.gpus, gpu=inf.gpu_name, model=inf.model.name, weights=weights, engine=engine,
                             conc=_n(inf.max_concurrency, 1), ctx=inf.max_model_len,
                             reason=(ph.zh and inf.starts_reason_zh) or inf.starts_reason, at_load=_n(inf.max_concurrency_at_load), inp=inf.input_tokens, out=inf.output_tokens))
        if inf.starts and inf.gpus > 1 and key == "srv_pinned_yes":  # 'one machine or two?': the machines it is on
            lines[-1] += _machines(plan, inf.gpu, ph)
        if not inf.starts and inf.fix:
            lines.append(ph.text("srv_fix", fix=inf.fix))
        asked = w.concurrency
        if inf.starts and asked and inf.max_concurrency_at_load is not None:
            # '40并发能扛住吗': the stated load is the question, its verdict the first line
            holds = inf.max_concurrency_at_load >= asked and not inf.saturated
            lines.insert(0, ph.text("srv_load_yes" if holds else "srv_load_no", asked=_n(asked), count=inf.gpus,
                                    gpu=inf.gpu_name, at_load=_n(inf.max_concurrency_at_load)))


def _render(answer: ServingAnswer, ph: Phrases) -> str:
    lines: list[str] = []
    if answer.engine_asked:
        lines.append(ph.text("srv_engine_note", engine=ph.name("engine_names", answer.engine_asked)))
        if answer.engine_asked == "ollama" and answer.workload.weights == "int4":
            lines.append(ph.text("srv_ollama_q4"))
    w = answer.workload
    loaded = bool(w.concurrency or w.request_rate)
    inf, plan = answer.inference, answer.plan
    if inf is not None:
        sized = inf.sizing
        _render_pinned(lines, inf, w, ph, plan)
        if sized and inf.saturated and w.gpus:
            lines.append(ph.text("srv_queue", held=_n(sized.concurrency), ttft=_n(sized.ttft_ms),
                                 tps=_n(sized.output_tokens_per_s)))
        if sized:
            lines.append(_figures(sized, ph, loaded))
        elif inf.min_gpus_for_weights:
            pass  # one node holds no replica: per-GPU figures of a single card say nothing
        else:
            lines.append(ph.text("srv_memory_only", weights=inf.weights_gib_per_gpu, kv=inf.kv_cache_gib_per_gpu,
                                 tokens=f"{inf.kv_capacity_tokens:,}"))
        if plan is not None and plan.candidates:
            lines += ["", *_picks(plan, ph)]
        elif plan is None:
            lines += ["", ph.text("srv_not_rented", gpu=inf.gpu_name)]
        if inf.launch is not None:
            lines += ["", ph.text("srv_launch"), "```bash", inf.launch.vllm, "```"]
        notes = inf.assumptions_zh if ph.zh else inf.assumptions
    else:
        if plan is None:
            raise ValueError("a serving answer holds the pinned GPU's inference or a plan")
        lines += _render_plan(plan, ph, loaded)
        notes = plan.assumptions_zh if ph.zh else plan.assumptions
    notes = [s[1] if ph.zh else s[0] for s in answer.said] + list(notes)
    if notes:
        lines += ["", ph.text("assume_title"), *[f"- {n}" for n in notes]]
    return "\n".join(lines)


def summary(o: ServingAnswer) -> str:
    """The deployment in a line (GPUs per replica x replicas, whether it starts, memory, load figures), then each
    cloud's pick with its price's date."""
    s = o.figures()
    inf = o.inference
    head = (f"{s.total_gpus or s.gpus_per_replica}x {s.gpu} ({s.gpus_per_replica} per replica x "
            f"{plural(s.replicas or 1, 'replica')}), starts={s.starts}")
    if inf is not None:
        head += (f", {inf.engine} {inf.weights}: weights {inf.weights_gib_per_gpu:.1f} GiB + KV "
                 f"{inf.kv_cache_gib_per_gpu:.1f} GiB per GPU ({inf.starts_reason})")
        head += f"; fix {inf.fix}" if inf.fix and not inf.starts else ""
    label = inf.engine_assumed if inf is not None else (o.plan.engine_assumed if o.plan is not None else "")
    head += f" [{label}]" if label else ""
    head += (f"; KV pool {figure(s.kv_capacity_tokens, 'tokens', ',')}, max concurrency "
             f"{figure(s.max_concurrency, 'sequences')}, {figure(s.output_tokens_per_s, 'output tokens/s', ',.0f')}, "
             f"TTFT {figure(s.ttft_ms, 'ms', ',.0f', 'not met (the queue grows)')}, "
             f"TPOT {figure(s.tpot_ms, 'ms', '.1f')}")
    lines = [head]
    plan = o.plan
    if plan is not None:
        by_type = {c.instance_type: c for c in plan.candidates}
        for cloud, itype in plan.picks.items():
            c = by_type[itype]
            dated = (f" (price {price_when(c.price, 'en')}, {c.price.confidence})"
                     if c.price is not None else "")
            cost = ("price on request" if c.cost_per_month_cny is None else
                    f"¥{c.cost_per_month_cny:,.0f}/month {c.billing}{dated}, "
                    f"{yuan(c.cny_per_million_output_tokens, ',.2f', 'no token price')} per million output tokens")
            lines.append(f"{cloud}: {itype} x {c.nodes} ({c.gpu_count:g}x {c.gpu}), {cost}")
        lines += list(plan.no_fit.values())
        lines += [f"{v.weights}: {v.cloud} {v.instance_type} x {v.nodes}, {yuan(v.cost_per_month_cny)}/month"
                  + (" (weight-only W8A16 Marlin)" if v.weight_only else "") for v in plan.variants]
        if not plan.candidates:
            lines.append(f"no rentable option: {plan.infeasible}")
    return "\n".join(lines)


MODULE = QuestionModule(
    name="serving", tool="size_serving", title="Serve a model", args=ServingArgs, answer=ServingAnswer, run=_run,
    route=_route, render=_render, summary=lambda o: summary(o),
    frames=(("serve", "fits"), ("serve", "count"), ("serve", "memory"), ("serve", "concurrency"),
            ("serve", "throughput"), ("serve", "latency"), ("serve", "cost"), ("serve", "plan")),
    description="Serve (deploy) a model: how many GPUs per replica x replicas for a load (concurrency or QPS, "
                "input/output lengths, TTFT/TPOT limits), KV-cache capacity and max concurrency, whether the engine "
                "starts on a pinned GPU x count, tokens/s, latency, cost per month and ¥ per million output tokens on "
                "Tencent and JD, and the vLLM/SGLang launch command. Call it for deployment, inference, QPS and "
                "concurrency questions.")
