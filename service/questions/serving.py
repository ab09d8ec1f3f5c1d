"""Question type `serving`: how many GPUs to serve a model, how many concurrent requests a GPU holds, whether a
quantised model starts on a card, tokens/s, latency and ¥ per million tokens ('上线一个70B的对话服务要几张卡',
'单卡A10能开多少并发', 'int4量化后单卡够不够'). Engine: service/planner/serving_*.py over service/sizing/serving."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field

from service.labels import price_when
from service.planner.lenient import catalog_for
from service.planner.questions.fit import gpu_for
from service.planner.serving_inference import InferenceResult, inference
from service.planner.serving_plan import plan_serving
from service.planner.serving_types import ServingPlan
from service.questions.base import AnswerBase, Ask, Context, Missing, Phrases, QuestionModule
from service.questions.parts import Said
from service.questions.view import serving_fields, subject_count, subject_gpu, unsized_model
from service.serving_workload import ServingWorkload
from service.workload import Workload

_ENGINES = ("vllm", "sglang", "trtllm", "lmdeploy")
_SERVING_KEYS = ("weights", "kv_dtype", "max_model_len", "input_tokens", "output_tokens", "concurrency",
                 "request_rate", "ttft_ms", "tpot_ms")
CARD_ROWS = 3  # options per cloud on the answer's card (the pick first)


class ServingArgs(ServingWorkload):
    question: str | None = Field(default=None, description="the question type (kept for follow-ups)")
    also: str | None = Field(default=None, description="another reading of the question, to mention")
    engine_asked: str | None = Field(default=None, description="an engine named that is sized as vLLM (Ollama ...)")
    asked: str | None = Field(default=None, description="what the question asks (the frame's `asked`: count, "
                              "memory, concurrency, throughput, latency, cost ...): the first line answers it")
    usage_hours_per_month: float | None = Field(default=None, gt=0, le=744, description="hours a month it runs "
                                                "(office hours only): the cost is on-demand for those hours")


class ServingAnswer(AnswerBase):
    kind: Literal["serving"] = "serving"
    workload: ServingWorkload
    engine_asked: str | None = None
    said: list[Said] = Field(default_factory=list)
    inference: InferenceResult | None = Field(default=None, description="the pinned GPU x count, as deployed")
    plan: ServingPlan | None = Field(default=None, description="where to rent it, per cloud")
    usage_hours_per_month: float | None = None
    usage_cost_cny_per_month: float | None = Field(default=None, description="on demand for the hours it runs")

    def facts(self) -> dict[str, float]:
        s = aliases(self)["serving"]
        keys = {"gpus_per_replica": "gpus_per_replica", "replicas": "replicas", "max_concurrency": "concurrency",
                "output_tokens_per_s": "tokens_per_s", "ttft_ms": "ttft_ms", "cost_cny_per_month": "cny_per_month",
                "kv_capacity_tokens": "kv_tokens", "total_gpus": "count"}
        out = {name: float(s[k]) for k, name in keys.items() if isinstance(s.get(k), (int, float))}
        inf = self.inference
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
    out: dict[str, Any] = {"kind": "serving", "workload": w.model_dump(), "engine_asked": args.engine_asked,
                           "said": said}
    age = ctx.max_price_age_days
    if w.gpu:
        g, gpu_said = gpu_for(cat, w.gpu)
        w = w.model_copy(update={"gpu": g.id})
        out["inference"] = inference(w, cat).model_dump(mode="json")
        out["said"] += [gpu_said] if gpu_said else []
        if any(r.gpu == g.id for r in cat.instances):
            out["plan"] = plan_serving(w, cat, max_price_age_days=age).model_dump(mode="json")
    else:
        out["plan"] = plan_serving(w, cat, max_price_age_days=age).model_dump(mode="json")
    answer = ServingAnswer.model_validate(out)
    top = answer.plan.candidates[0] if answer.plan is not None and answer.plan.candidates else None
    if args.usage_hours_per_month and top is not None and top.cost_per_hour_cny is not None:
        hourly = top.monthly_cny_by_billing.get("on_demand")
        per_hour = hourly / 730 if hourly else top.cost_per_hour_cny
        answer.usage_hours_per_month = args.usage_hours_per_month
        answer.usage_cost_cny_per_month = round(per_hour * args.usage_hours_per_month, 2)
    return answer


def _route(a: Ask) -> ServingArgs | Missing:
    f = a.frame
    if (name := unsized_model(f)) is not None:
        return Missing("model_size", name)
    fields = serving_fields(f)
    if not fields.get("model") and not fields.get("params_b"):
        return Missing("model")
    engine = f.setup.knobs.engine
    if engine in _ENGINES:
        fields["engine"] = engine
    elif engine:
        fields["engine_asked"] = engine
    gpu = subject_gpu(f)
    if gpu:
        fields["gpu"] = gpu
        fields["gpus"] = subject_count(f)
    if f.constraints.usage_hours_per_month:
        fields["usage_hours_per_month"] = f.constraints.usage_hours_per_month
    if fields.get("concurrency") and fields.get("request_rate"):
        fields.pop("concurrency" if f.load.arrival != "burst" else "request_rate")
    return ServingArgs.model_validate({**{k: v for k, v in fields.items() if v is not None}, "asked": f.asked})


def _n(x: float | None, digits: int = 0) -> str:
    return "—" if x is None else f"{x:,.{digits}f}"


def _figures(s: dict[str, Any], ph: Phrases, loaded: bool) -> str:
    """The memory arithmetic, then throughput and latency at the stated load (or with the replicas full)."""
    return str(ph["srv_figures" if loaded else "srv_figures_full"]).format(
        weights=_n(s["weights_gib_per_gpu"], 1), kv=_n(s["kv_cache_gib_per_gpu"], 1),
        tokens=f"{s['kv_capacity_tokens']:,}", conc=_n(s["max_concurrency"], 1), ctx=s["max_model_len"],
        tps=_n(s.get("output_tokens_per_s")), ttft=_n(s.get("ttft_ms")), tpot=_n(s.get("tpot_ms"), 1),
        inp=s["input_tokens"], out=s["output_tokens"], load=_n(s.get("concurrency")),
        at_load=_n(s.get("max_concurrency_at_load")))


def _option_line(o: dict[str, Any], ph: Phrases) -> str:
    cost = (str(ph["srv_cost"]).format(hour=_n(o["cost_per_hour_cny"], 2), month=_n(o["cost_per_month_cny"]),
                                       cpm=_n(o["cny_per_million_output_tokens"], 2), billing=ph["billing_names"].get(
                                           o["billing"], o["billing"]))
            if o["cost_per_hour_cny"] is not None else f"{ph['billing_names'].get('on_request', '')}{'：' if ph['hours_unit'] == '小时' else ': '}{o['quote_link']}")
    return str(ph["srv_option"]).format(cloud=ph["cloud_names"].get(o["cloud"], o["cloud"]),
                                        instance=o["instance_type"], count=f"{o['gpu_count']:g}", gpu=o["gpu"],
                                        nodes=o["nodes"], cost=cost)


def _need(s: dict[str, Any], model: str, ph: Phrases) -> str:
    pp = s.get("pipeline_parallel") or 1
    return str(ph["srv_need_pp" if pp > 1 else "srv_need"]).format(
        total=s["total_gpus"], gpu=s["gpu_name"], tp=s.get("tensor_parallel") if pp > 1 else s["gpus_per_replica"],
        pp=pp, replicas=s["replicas"], model=model, weights=ph["weights_names"].get(s["weights"], s["weights"]),
        engine=ph["engine_names"].get(s["engine"], s["engine"]))


def _variants(plan: dict[str, Any], ph: Phrases) -> list[str]:
    """FP8 / INT4 beside a BF16 plan, and each cloud without a pick, said."""
    out: list[str] = []
    if plan.get("variants"):
        out += ["", str(ph["srv_variants"])]
        for v in plan["variants"]:
            note = str(ph["srv_variant_weight_only"]).format(gpu=v["gpu"]) if v.get("weight_only") else ""
            out.append(str(ph["srv_variant" if v.get("cost_per_month_cny") is not None else "srv_variant_quote"]).format(
                weights=ph["weights_names"].get(v["weights"], v["weights"]),
                cloud=ph["cloud_names"].get(v["cloud"], v["cloud"]), instance=v["instance_type"], nodes=v["nodes"],
                gpus=v["total_gpus"], gpu=v["gpu"], month=_n(v.get("cost_per_month_cny")),
                cpm=_n(v.get("cny_per_million_output_tokens"), 2), note=note))
    return out


def _no_fit(plan: dict[str, Any], ph: Phrases) -> list[str]:
    zh = ph["hours_unit"] == "小时"
    reasons = (plan.get("no_fit_zh") if zh else plan.get("no_fit")) or {}
    return [str(ph["srv_no_fit"]).format(reason=r) for r in reasons.values()]


def _render_plan(plan: dict[str, Any], ph: Phrases, loaded: bool) -> list[str]:
    if not plan["candidates"]:
        return [str(ph["srv_none"]).format(reason=plan.get("infeasible_zh") if ph["hours_unit"] == "小时"
                                           else plan.get("infeasible"))]
    top = plan["candidates"][0]
    s = top["sizing"]
    lines = [_need(s, plan["model"]["name"], ph), _figures(s, ph, loaded),
             str(s["headroom_zh"] if ph["hours_unit"] == "小时" else s["headroom"]), ""]
    by_type = {c["instance_type"]: c for c in plan["candidates"]}
    lines += [str(ph["srv_picks"]), *[_option_line(by_type[t], ph) for t in plan["picks"].values()], *_no_fit(plan, ph)]
    lines += _variants(plan, ph)
    lines += ["", str(ph["srv_launch"]), "```bash", top["launch"]["vllm"], "```"]
    return lines


def _render_art(art: dict[str, Any], ph: Phrases) -> str:
    zh = ph["hours_unit"] == "小时"
    lines: list[str] = []
    if art.get("engine_asked"):
        lines.append(str(ph["srv_engine_note"]).format(engine=ph["engine_names"].get(art["engine_asked"],
                                                                                      art["engine_asked"])))
    w = art["workload"]
    loaded = bool(w.get("concurrency") or w.get("request_rate"))
    inf = art.get("inference")
    if inf is not None:
        sized = inf.get("sizing")
        if sized and not w.get("gpus"):  # 'how many H800s': the count first
            lines.append(_need(sized, inf["model"]["name"], ph))
        elif inf.get("min_gpus_for_weights"):  # 'how many A100s for the full R1': more than one node
            n = inf["min_gpus_for_weights"]
            lines.append(str(ph["srv_multi_node"]).format(
                n=n, nodes=math.ceil(n / 8), gpu=inf["gpu_name"], model=inf["model"]["name"],
                weights=ph["weights_names"].get(inf["weights"], inf["weights"]),
                total=_n(inf["weights_gib_per_gpu"] * inf["gpus"], 0)))
        elif inf.get("refused_layout") and sized:  # 'TP6' for 64 heads: the engine's words, the layout that runs
            message = str(inf["refused_layout"]).split(": ", 1)[-1].strip('"').rstrip(".")
            lines.append(str(ph["srv_pinned_layout"]).format(
                tp0=inf["refused_layout"].split(":")[0].removeprefix("TP").split(" ")[0], message=message,
                count=inf["gpus"], gpu=inf["gpu_name"], flags=inf.get("fix") or "", model=inf["model"]["name"],
                engine=ph["engine_names"].get(inf["engine"], inf["engine"]),
                weights=ph["weights_names"].get(inf["weights"], inf["weights"]),
                at_load=_n(inf.get("max_concurrency_at_load")), inp=inf["input_tokens"], out=inf["output_tokens"]))
        else:
            key = "srv_pinned_no" if not inf["starts"] else "srv_pinned_short" if inf.get("context_lowered_from") \
                else "srv_pinned_yes"
            lines.append(str(ph[key]).format(full=f"{inf.get('context_lowered_from') or 0:,}",
                                             ctx_f=f"{inf['max_model_len']:,}",
                count=inf["gpus"], gpu=inf["gpu_name"], model=inf["model"]["name"],
                weights=ph["weights_names"].get(inf["weights"], inf["weights"]),
                engine=ph["engine_names"].get(inf["engine"], inf["engine"]), conc=_n(inf["max_concurrency"], 1),
                ctx=inf["max_model_len"], reason=(zh and inf.get("starts_reason_zh")) or inf["starts_reason"],
                at_load=_n(inf.get("max_concurrency_at_load")), inp=inf["input_tokens"], out=inf["output_tokens"]))
            if not inf["starts"] and inf.get("fix"):
                lines.append(str(ph["srv_fix"]).format(fix=inf["fix"]))
            asked = w.get("concurrency")
            if inf["starts"] and asked and inf.get("max_concurrency_at_load") is not None:
                # '40并发能扛住吗': the stated load is the question, its verdict the first line
                holds = inf["max_concurrency_at_load"] >= asked and not inf.get("saturated")
                lines.insert(0, str(ph["srv_load_yes" if holds else "srv_load_no"]).format(
                    asked=_n(asked), count=inf["gpus"], gpu=inf["gpu_name"],
                    at_load=_n(inf["max_concurrency_at_load"])))
        if sized and inf.get("saturated") and w.get("gpus"):
            lines.append(str(ph["srv_queue"]).format(held=_n(sized.get("concurrency")), ttft=_n(sized.get("ttft_ms")),
                                                     tps=_n(sized.get("output_tokens_per_s"))))
        if sized:
            lines.append(_figures(sized, ph, loaded))
        elif inf.get("min_gpus_for_weights"):
            pass  # one node holds no replica: per-GPU figures of a single card say nothing
        else:
            lines.append(str(ph["srv_memory_only"]).format(weights=inf["weights_gib_per_gpu"],
                                                           kv=inf["kv_cache_gib_per_gpu"],
                                                           tokens=f"{inf['kv_capacity_tokens']:,}"))
        plan = art.get("plan")
        if plan and plan["candidates"]:
            by_type = {c["instance_type"]: c for c in plan["candidates"]}
            lines += ["", str(ph["srv_picks"]), *[_option_line(by_type[t], ph) for t in plan["picks"].values()],
                      *_no_fit(plan, ph)]
        elif not plan:
            lines += ["", str(ph["srv_not_rented"]).format(gpu=inf["gpu_name"])]
        if inf.get("launch"):
            lines += ["", str(ph["srv_launch"]), "```bash", inf["launch"]["vllm"], "```"]
        notes = inf["assumptions_zh"] if zh else inf["assumptions"]
    else:
        lines += _render_plan(art["plan"], ph, loaded)
        notes = art["plan"]["assumptions_zh"] if zh else art["plan"]["assumptions"]
    notes = [s[1] if zh else s[0] for s in art.get("said") or []] + list(notes)
    if notes:
        lines += ["", str(ph["assume_title"]), *[f"- {n}" for n in notes]]
    return "\n".join(lines)


def aliases(answer: ServingAnswer) -> dict[str, Any]:
    """AskResult's `serving` and `serving_plan` fields (the documented aliases of `answer`)."""
    art = answer.public()
    inf, plan = art.get("inference"), art.get("plan")
    top = plan["candidates"][0] if plan and plan["candidates"] else None
    s = (inf or {}).get("sizing") or (top["sizing"] if top else None) or {}
    out = {"gpu": (inf or {}).get("gpu") or s.get("gpu"), "gpus_per_replica": s.get("gpus_per_replica") or
           (inf or {}).get("gpus"), "replicas": s.get("replicas"),
           "total_gpus": s.get("total_gpus") or (inf or {}).get("min_gpus_for_weights"),
           "starts": (inf or {}).get("starts", bool(top)),
           "min_gpus_for_weights": (inf or {}).get("min_gpus_for_weights"), "max_concurrency": s.get("max_concurrency") or
           (inf or {}).get("max_concurrency"), "kv_capacity_tokens": s.get("kv_capacity_tokens") or
           (inf or {}).get("kv_capacity_tokens"), "output_tokens_per_s": s.get("output_tokens_per_s"),
           "ttft_ms": s.get("ttft_ms"), "tpot_ms": s.get("tpot_ms"),
           "cost_cny_per_month": top["cost_per_month_cny"] if top else None,
           "cny_per_million_tokens": top["cny_per_million_output_tokens"] if top else None,
           "instance": {"cloud": top["cloud"], "instance_type": top["instance_type"], "nodes": top["nodes"]}
           if top else None}
    return {"serving": out, "serving_plan": card(art)}


def card(art: dict[str, Any]) -> dict[str, Any] | None:
    """What the answer's card draws (web, Slack), kept small: the plan with its first CARD_ROWS options per cloud
    (each cloud's pick first; the rejected list counted, not carried) and the pinned GPU's inference, both with
    the name assumptions the answer states."""
    plan, inf = art.get("plan"), art.get("inference")
    if plan is None and inf is None:
        return None
    said = art.get("said") or []

    def stated(d: dict[str, Any]) -> dict[str, Any]:
        return {**d, "assumptions": [s[0] for s in said] + list(d.get("assumptions") or []),
                "assumptions_zh": [s[1] for s in said] + list(d.get("assumptions_zh") or [])}

    out: dict[str, Any] = {"plan": None, "inference": None if inf is None else stated(inf)}
    if plan is not None:
        shown: list[dict[str, Any]] = []
        for c in plan["candidates"]:
            if sum(o["cloud"] == c["cloud"] for o in shown) < CARD_ROWS:
                shown.append(c)
        out["plan"] = {**stated(plan), "candidates": shown, "rejected": []}
        out["n_candidates"], out["n_rejected"] = len(plan["candidates"]), len(plan["rejected"])
    return out


def summary(o: ServingAnswer) -> str:
    """The deployment in a line (GPUs per replica x replicas, whether it starts, memory, load figures), then each
    cloud's pick with its price's date."""
    s = aliases(o)["serving"]
    inf = o.inference
    head = (f"{s['total_gpus'] or s['gpus_per_replica']}x {s['gpu']} ({s['gpus_per_replica']} per replica x "
            f"{s['replicas']} replicas), starts={s['starts']}")
    if inf is not None:
        head += (f", {inf.engine} {inf.weights}: weights {inf.weights_gib_per_gpu:.1f} GiB + KV "
                 f"{inf.kv_cache_gib_per_gpu:.1f} GiB per GPU ({inf.starts_reason})")
        head += f"; fix {inf.fix}" if inf.fix and not inf.starts else ""
    label = inf.engine_assumed if inf is not None else (o.plan.engine_assumed if o.plan is not None else "")
    head += f" [{label}]" if label else ""
    head += (f"; KV pool {s['kv_capacity_tokens']} tokens, max concurrency {s['max_concurrency']}, "
             f"{s['output_tokens_per_s']} output tokens/s, TTFT {s['ttft_ms']} ms, TPOT {s['tpot_ms']} ms")
    lines = [head]
    plan = o.plan
    if plan is not None:
        by_type = {c.instance_type: c for c in plan.candidates}
        for cloud, itype in plan.picks.items():
            c = by_type[itype]
            dated = (f" (price {price_when(c.price, 'en')}, {c.price.confidence})"
                     if c.price is not None else "")
            cost = ("price on request" if c.cost_per_month_cny is None else
                    f"¥{c.cost_per_month_cny:,.0f}/month {c.billing}{dated}, ¥{c.cny_per_million_output_tokens} per "
                    "million output tokens")
            lines.append(f"{cloud}: {itype} x {c.nodes} ({c.gpu_count:g}x {c.gpu}), {cost}")
        lines += list(plan.no_fit.values())
        lines += [f"{v.weights}: {v.cloud} {v.instance_type} x {v.nodes}, ¥{v.cost_per_month_cny}/month"
                  + (" (weight-only W8A16 Marlin)" if v.weight_only else "") for v in plan.variants]
        if not plan.candidates:
            lines.append(f"no rentable option: {plan.infeasible}")
    return "\n".join(lines)


def _render(answer: ServingAnswer, ph: Phrases) -> str:
    return _render_art(answer.public(), ph)


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
