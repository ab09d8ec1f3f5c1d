"""Question type `diagnose`: the user reports what a run did and asks whether it is expected, why, or how to fix
it ('训一个epoch要20小时正常吗', '8卡4k就OOM', 'GPU util 40%', 'vllm 显存吃到21g'). The cause the user's own numbers
point to first, with its number and the fix (the cause model, service/planner/causes), then the engine's figure
beside theirs (service/planner/questions/diagnose.py for a training run, serve_diagnose.py for a server) and the
other causes that apply. Routing reads the question frame only (service/questions/diagnose_route.py)."""

from __future__ import annotations

from typing import Any

from service.catalog.loader import Catalog
from service.errors import AdvisorError, InvalidInputError, UnknownModelError
from service.frame import Load, Setup
from service.planner.causes.run import serve_diagnosis, train_diagnosis
from service.planner.causes.types import Diagnosis
from service.planner.lenient import catalog_for, with_assumptions
from service.planner.questions.diagnose import diagnose, rule
from service.planner.questions.fit import gpu_for
from service.planner.questions.serve_diagnose import ServeCase, serve_diagnose
from service.questions.base import Context, Phrases, QuestionModule, workload_of
from service.questions.diagnose_answer import DiagnoseAnswer, DiagnoseArgs, with_setup
from service.questions.diagnose_estimate import estimate_text
from service.questions.diagnose_general import (
    also_lines,
    general_also,
    lead_lines,
    render_general,
    run_general,
    stated_causes,
)
from service.questions.diagnose_kinds import DEFAULT_GPU
from service.questions.diagnose_render import ask_line, figure_line, head_lines, num, other_lines
from service.questions.diagnose_route import route
from service.questions.diagnose_serving import render_serving
from service.questions.summary_text import figure
from service.questions.texts import memory_line, method_name
from service.workload import Workload


def _cards_of(cat: Catalog, case: ServeCase) -> tuple[ServeCase, list[tuple[str, str]]]:
    """Each setup's card as the catalog holds it: a card given by its memory ('单卡24G显存') is a card of that
    memory (gpu_for: a rented one first), said once."""
    said: list[tuple[str, str]] = []
    setups = []
    for s in case.setups:
        g, note = gpu_for(cat, s.gpu)
        if note is not None and note not in said:
            said.append(note)
        setups.append(s.model_copy(update={"gpu": g.id}))
    return case.model_copy(update={"setups": setups}), said


def _run_serving(ctx: Context, args: DiagnoseArgs, case: ServeCase) -> DiagnoseAnswer:
    try:
        cat, said = catalog_for(ctx.catalog, Workload(model=case.model))
    except UnknownModelError:
        if args.general is None:
            raise
        return run_general(ctx, args, case.model)
    case, cards = _cards_of(cat, case)
    d = serve_diagnose(cat, case)
    head = d.setups[0]
    g = next(x for x in cat.gpus if x.id == head.gpu)
    notes = [(en, zh) for en, zh in [*said, *cards]]
    if args.gpu_assumed:
        notes.append((f"The GPU was not named: sized on {g.name} cards; tell me yours.",
                      f"没有说是什么卡：按 {g.name} 估算，告诉我实际的卡可以算得更准。"))
    if args.engine_assumed:
        notes.append(("The inference engine was not named: vLLM's defaults assumed.",
                      "没有说用哪个推理引擎：按 vLLM 的默认设置说明。"))
    kind = {"oom": "oom", "growth": "oom", "slow": "slow"}.get(case.asked)
    diagnosis = None
    if kind is not None and args.setup is not None:
        diagnosis = _causes(lambda: serve_diagnosis(cat, case.model, g, _with_count(args.setup, head.gpus, head.tp),
                                                    args.load or Load(), kind))  # type: ignore[arg-type]
    expected = d.expected if diagnosis is None or diagnosis.verdict is None else diagnosis.verdict
    return DiagnoseAnswer(observation=args.observation, gpu=g.id, gpu_name=g.name, gpu_count=head.gpus,
                          gpu_memory_gib=g.memory_gib, usable_gib=round(g.memory_gib, 2), sized=True,
                          expected=expected, serving=d, diagnosis=diagnosis, engine=head.engine,
                          assumptions=[*d.assumptions, *[en for en, _ in notes]],
                          assumptions_zh=[*d.assumptions_zh, *[zh for _, zh in notes]])


def _with_count(setup: Setup, gpus: int, tp: int) -> Setup:
    hw = setup.hardware.model_copy(update={"gpu_count": gpus})
    knobs = setup.knobs.model_copy(update={"tp": setup.knobs.tp or tp})
    return setup.model_copy(update={"hardware": hw, "knobs": knobs})


def _causes(compute: Any) -> Diagnosis | None:
    """The cause model's diagnosis; None when the setup cannot be sized that way (the estimate still answers)."""
    try:
        out: Diagnosis = compute()
        return out
    except (AdvisorError, ValueError):
        return None


def _observed_tps(args: DiagnoseArgs, answer: DiagnoseAnswer) -> float | None:
    """The user's training rate, all GPUs together: as stated, or their hours over the data, or their step time."""
    obs = args.observation
    if obs is not None and obs.tokens_per_s:
        return obs.tokens_per_s
    if answer.ratio and answer.throughput_tokens_per_s and not answer.data_unknown:
        return answer.throughput_tokens_per_s / answer.ratio
    seen = args.setup.outcome if args.setup is not None else None
    s = answer.strategy
    if seen is not None and seen.step_s:
        k = args.setup.knobs if args.setup is not None else None
        accum = (k.grad_accum if k is not None else None) or 1
        seq, micro = (s.seq_len, s.micro_batch) if s is not None else (2048, 1)
        return float(seq * micro * (args.gpu_count or 1) * accum) / seen.step_s
    return None


def _train_kind(args: DiagnoseArgs, answer: DiagnoseAnswer) -> str:
    assert args.observation is not None
    kind = args.observation.kind
    seen = args.setup.outcome if args.setup is not None else None
    if kind in ("hours", "slow") and (seen is not None and seen.kind == "scaling" or
                                      answer.speedup_vs_reference is not None):
        return "scaling"
    return "slow" if kind in ("hours", "util") else kind


def _rule_answers(ctx: Context, args: DiagnoseArgs) -> bool:
    """A catalog rule answers the unsized run (no bf16 on the card, an engine's reservation)."""
    if args.observation is None or not (args.mentions_bf16 or args.engine):
        return False
    try:
        return rule(ctx.catalog, args.gpu, args.observation, args.engine, args.mentions_bf16) is not None
    except AdvisorError:
        return False


def _run(ctx: Context, args: DiagnoseArgs) -> DiagnoseAnswer:
    args = with_setup(args)
    rule_answers = _rule_answers(ctx, args)
    if args.general is not None and not args.model_named and args.serving is None and not rule_answers:
        general = run_general(ctx, args)
        if stated_causes(general.general):
            return general  # else the unsized estimate asks for the model, with the guide
    try:
        return general_also(ctx, args, _run_sized(ctx, args))
    except UnknownModelError:  # a model the catalog does not hold: the causes that need no size still answer
        if args.general is None:
            raise
        return run_general(ctx, args, args.model or "")


def _run_sized(ctx: Context, args: DiagnoseArgs) -> DiagnoseAnswer:
    if args.serving is not None:
        return _run_serving(ctx, args, args.serving)
    if args.observation is None:
        raise InvalidInputError("observation: Field required: say what the run did (OOM, hours per epoch, memory "
                                "in use ...).", "Give the observation, or a server's setups under `serving`.")
    obs = args.observation
    w = workload_of(args).model_copy(update={"gpu_count": None})
    cat, said = catalog_for(ctx.catalog, w) if args.model_named else (ctx.catalog, [])
    try:
        gpu_for(cat, args.gpu)
    except AdvisorError:  # a card the catalog does not hold ('MX150', 'Ascend-910B4'): sized on the default, said
        said = [*said, (f"{args.gpu} is not in the catalog: sized on the {DEFAULT_GPU}.",
                        f"目录里没有 {args.gpu}：按 {DEFAULT_GPU} 估算。")]
        args = args.model_copy(update={"gpu": DEFAULT_GPU})
    out = diagnose(cat, w if args.model_named else None, args.gpu, args.gpu_count or 1, obs, args.engine,
                   args.mentions_bf16)
    if args.gpu_assumed:
        said = [*said, (f"The GPU was not named: sized on {args.gpu_count or 1}x {args.gpu}; tell me yours.",
                        f"没有说是什么卡：按 {args.gpu_count or 1} 张 {args.gpu} 估算，告诉我实际的卡可以算得更准。")]
    if args.engine_assumed:
        said = [*said, ("The inference engine was not named: vLLM's defaults assumed.",
                        "没有说用哪个推理引擎：按 vLLM 的默认设置说明。")]
    answer = DiagnoseAnswer.model_validate(with_assumptions(out, said))
    if not args.model_named or args.setup is None:
        return answer
    g, _ = gpu_for(cat, args.gpu)
    setup = args.setup.model_copy(update={"outcome": args.setup.outcome or None})
    if args.served or (answer.rule == "engine_prealloc" and args.engine):
        model = args.model or f"{args.params_b:g}B"
        diagnosis = _causes(lambda: serve_diagnosis(cat, model, g, _with_count(setup, args.gpu_count or 1, 1),
                                                    args.load or Load(), "memory"))
    elif answer.sized:
        diagnosis = _causes(lambda: train_diagnosis(
            cat, w, g, args.gpu_count or 1, setup, _train_kind(args, answer),  # type: ignore[arg-type]
            _observed_tps(args, answer), not answer.data_unknown, answer.throughput_tokens_per_s))
    else:
        diagnosis = None
    if diagnosis is None:
        return answer
    keep_old = diagnosis.observed_kind == "train_slow" and answer.expected is not None
    expected = answer.expected if keep_old or diagnosis.verdict is None else diagnosis.verdict
    return answer.model_copy(update={"diagnosis": diagnosis, "expected": expected,
                                     "engine": args.engine if args.served or answer.rule else None})


def _names(answer: DiagnoseAnswer, ph: Phrases) -> dict[str, str]:
    art = answer.public()
    code = answer.serving.setups[0].engine if answer.serving is not None else (answer.engine or "")
    return {"gpu": answer.gpu_name, "count": str(answer.gpu_count),
            "model": answer.model.name if answer.model is not None else (
                answer.serving.model_name if answer.serving is not None else ""),
            "method": method_name(art, ph) if art.get("strategy") else "",
            "engine": str(ph["engine_names"].get(code, code)), "engine_code": code}


def _figures(answer: DiagnoseAnswer, ph: Phrases) -> dict[str, str]:
    s = answer.strategy
    d = answer.diagnosis
    ref = answer.reference_gpus or 1
    card = d.observed.value if d is not None and d.observed is not None and d.observed_kind == "train_oom" else         answer.usable_gib
    whole = bool(answer.whole_run)
    est = answer.estimated_hours_run if whole else answer.estimated_hours_per_epoch
    span = str(ph["dia_span_run" if whole else "dia_span_epoch"]).format(epochs=num(answer.epochs or 1))
    hours = answer.observation.hours if answer.observation is not None else None
    return {"count": str(answer.gpu_count), "gpu": answer.gpu_name, "span": span,
            "est": num(est) if est and hours else "", "hours": num(hours) if hours else "",
            "model": answer.model.name if answer.model is not None else "", "seq": num(s.seq_len) if s else "",
            "mb": num(s.micro_batch) if s else "", "card": num(card), "card_raw": str(answer.gpu_memory_gib),
            "need": num(d.expected.value) if d is not None and d.expected is not None else "", "ref": str(ref)}


def _cause_first(d: Diagnosis) -> bool:
    if d.top is None or d.top.code.startswith("maybe_"):  # only an unstated setting's cost: the figure first
        return d.impossible is not None
    if d.observed_kind == "train_slow":
        return d.verdict is False or d.top.stated
    # an OOM the estimate fits: its figure first, then the one setting that would settle it
    return not (d.observed_kind == "train_oom" and d.verdict is False)


def _notes(answer: DiagnoseAnswer, ph: Phrases, serving: bool) -> list[str]:
    zh = ph["hours_unit"] == "小时"
    if serving:
        notes = (answer.assumptions_zh if zh else answer.assumptions)[1:]
        return ["", str(ph["assume_title"]), *[f"- {n}" for n in notes]] if notes else []
    if not answer.sized:  # a rule's answer: every assumption (the engine, the card) is said
        said = [f"> {x}" for x in (answer.assumptions_zh if zh else answer.assumptions)]
        return ["", *said] if said else []
    items = answer.assumptions_zh if zh else []
    said = [f"> {x}" for x in items if "按 " in x and "估算" in x]
    return ["", *said] if said else []


def _render(answer: DiagnoseAnswer, ph: Phrases) -> str:
    if answer.general is not None:
        return render_general(answer, ph)
    d = answer.diagnosis
    serving = answer.serving is not None
    if serving:
        assert answer.serving is not None
        old = render_serving(answer.serving, ph)
    else:
        old = estimate_text(answer.public(), ph).splitlines()
    if d is None or not _cause_first(d):
        ask = [ask_line(d, ph)] if d is not None and d.ask and old else []
        lines = old[:1] + ask + old[1:]
        lines += other_lines(d, ph, _names(answer, ph), 0) if d is not None and d.causes and not serving else []
        return "\n".join(lead_lines(answer, ph) + lines + also_lines(answer, ph) + _notes(answer, ph, serving))
    names = _names(answer, ph)
    figures = {**names, **_figures(answer, ph)}
    lines = head_lines(d, ph, names, figures)
    if serving:
        cut = next((i for i, x in enumerate(old) if x.startswith("###")), len(old))
        lines += ["", *[x for x in old[1:cut] if x.strip()]]
    else:
        fig = figure_line(d, ph, figures)
        lines += ["", fig] if fig else []
        if answer.memory is not None and d.observed_kind in ("train_oom", "train_memory"):
            lines.append(memory_line(answer.public(), ph))
    lines += other_lines(d, ph, names)
    return "\n".join(lead_lines(answer, ph) + lines + also_lines(answer, ph) + _notes(answer, ph, serving))


def _summary(o: DiagnoseAnswer) -> str:
    if o.serving is not None:
        d = o.serving
        figs = "; ".join(f"{f.engine} TP{f.tp} on {f.gpus}x {f.gpu}: starts={f.starts}, weights "
                         f"{figure(f.weights_gib_per_gpu, 'GiB')} + KV {figure(f.kv_cache_gib_per_gpu, 'GiB')} per GPU, "
                         f"{figure(f.tokens_per_s_single, 'tok/s')} single" for f in d.setups)
        assumed = f" ({d.engine_assumed})" if d.engine_assumed else ""
        return f"expected={d.expected}, cause {d.cause}, fix {d.fix}{assumed}: {figs}"
    top = o.diagnosis.top if o.diagnosis is not None else None
    cause = f" top cause {top.code} ({top.explains.value} {top.explains.unit})" if top and top.explains else ""
    verdict = "unknown" if o.expected is None else o.expected
    if o.sized:
        return (f"expected={verdict}:{cause} engine {figure(o.per_gpu_gib, 'GiB')} per GPU on {o.gpu_count}x {o.gpu}, "
                f"{figure(o.training_hours, 'h', missing='hours not sized')}")
    return f"expected={verdict} by rule {o.rule or 'of thumb'} on {o.gpu}"


MODULE = QuestionModule(
    name="diagnose", tool="diagnose", title="Is what I saw expected?", args=DiagnoseArgs, answer=DiagnoseAnswer,
    run=_run, route=route, render=_render, summary=_summary,
    frames=(("train", "cause"), ("train", "fix"), ("serve", "cause"), ("serve", "fix")),
    description="The user reports what a run did (OOM on N x GPU at length L, T hours an epoch, X GB used, low GPU "
                "utilisation, host RAM overflow, a server that OOMs, holds memory or is slow, more GPUs no faster) "
                "and asks whether it is expected, why, or how to fix it: the cause the user's own numbers point to, "
                "with its number and the fix, the engine's figure for that setup beside theirs, the verdict and the "
                "other causes that apply.")
