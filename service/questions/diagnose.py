"""Question type `diagnose`: the user reports what a run did and asks whether it is expected ('训一个epoch要20
小时正常吗', '8卡4k就OOM', 'GPU util 40%'). The engine's figure for the same setup, the verdict, the likely cause
and the change that fixes it. Engine: service/planner/questions/diagnose.py."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field

from service.planner.lenient import catalog_for, with_assumptions
from service.planner.questions.diagnose import Observation, diagnose
from service.planner.questions.serve_diagnose import ServeCase, ServeDiagnosis, serve_diagnose
from service.questions.base import (
    AnswerBase,
    Ask,
    Asked,
    Context,
    Missing,
    Phrases,
    QuestionModule,
    workload_of,
)
from service.questions.diagnose_serving import render_serving, server_question, serving_args
from service.questions.parts import MemoryTerms, ModelEcho, Part, StrategyEcho
from service.questions.routing import subject_count, subject_gpu, without
from service.questions.summary_text import figure
from service.questions.texts import memory_line, method_name
from service.reader.cues import CUES
from service.workload import Workload

# A run's GPU when the question does not say: the data-centre card most such runs use, said in the answer.
DEFAULT_GPU = "A100-80G-SXM"
# '8 ranks via torchrun', '--nproc_per_node 8', '4 个进程': the processes of the run, one per GPU
_RANKS = re.compile(r"(?<![\d.])(?P<n>\d{1,3})\s*(?:ranks|processes|procs|个进程)|nproc[-_]per[-_]node[=\s]+(?P<m>\d{1,3})",
                    re.IGNORECASE)
_BF16 = re.compile(r"bf16|bfloat16", re.IGNORECASE)
_SERVED, _TRAINED = CUES["serve"], CUES["train"]
_MULTI = re.compile(r"多卡|多机|(?<![A-Za-z])(?:multi[- ]?gpu|multi[- ]?node|zero[-_ ]?[23])(?![A-Za-z])", re.IGNORECASE)


class DiagnoseArgs(Asked):
    gpu: str = Field(description="the GPU the run used: A800, 4090, A100 80G ...")
    observation: Observation | None = Field(default=None, description="what the run did: kind oom | hours | memory "
                                            "| util | host_oom | slow, with the figures the user gave")
    serving: ServeCase | None = Field(default=None, description="a server's run (an engine named or serving words): "
                                      "its setups (engine, GPU x count, TP, flags, what each did) and what is asked")
    engine: str | None = Field(default=None, description="the inference engine, when the run is a server (vllm ...)")
    mentions_bf16: bool = Field(default=False, description="the user runs bf16")
    model_named: bool = Field(default=True, description="false: no model was named; only catalog rules answer")
    gpu_assumed: bool = Field(default=False, description="the GPU was not named: the answer says which was assumed")
    engine_assumed: bool = Field(default=False, description="a server's engine was not named: vLLM's defaults assumed")


class Finding(Part):
    """A cause or a fix: its code (the renderer's words) and the figures that re-sizing gave it."""

    code: str
    per_gpu_gib: float | None = None
    fits: bool | None = None
    training_hours: float | None = None
    strategy: StrategyEcho | None = None
    gpu_count: int | None = None
    seq_len: int | None = None
    host_ram_gib: float | None = None
    ranks: int | None = None
    fraction: float | None = None
    reserved_gib: float | None = None
    speedup: float | None = None
    gpus: int | None = None
    ref: int | None = None


class DiagnoseAnswer(AnswerBase):
    kind: Literal["diagnose"] = "diagnose"
    observation: Observation | None = None
    serving: ServeDiagnosis | None = Field(default=None, description="a server diagnosed: each setup's engine "
                                           "figures, the verdict, the cause and the one flag that fixes it")
    gpu: str
    gpu_name: str
    gpu_count: int
    gpu_memory_gib: float
    usable_gib: float
    sized: bool = True
    expected: bool | None = None
    rule: str | None = None
    causes: list[Finding] = Field(default_factory=list)
    fixes: list[Finding] = Field(default_factory=list)
    per_gpu_gib: float | None = None
    fits: bool | None = None
    memory: MemoryTerms | None = None
    strategy: StrategyEcho | None = None
    model: ModelEcho | None = None
    training_hours: float | None = None
    throughput_tokens_per_s: float | None = None
    estimated_hours_per_epoch: float | None = None
    estimated_hours_run: float | None = None
    whole_run: bool | None = None
    ratio: float | None = None
    tokens_per_s: float | None = None
    tokens_in_observed_time: int | None = None
    data_unknown: bool | None = None
    speedup_vs_reference: float | None = None
    reference_gpus: int | None = None
    observed_gib: float | None = None
    host_ram_needed_gib: float | None = None
    epochs: float | None = Field(default=None, description="the epochs the whole run's estimate covers")
    host_copies_gib: float | None = Field(default=None, description="host RAM of one full model copy per process")
    ranks: int | None = None
    host_ram_seen_gb: float | None = Field(default=None, description="the host RAM the post states, as written")
    util_high: bool | None = None
    observed_tokens_per_s: float | None = None
    workload: Workload | None = None
    assumptions: list[str] = Field(default_factory=list)
    assumptions_zh: list[str] = Field(default_factory=list)

    def facts(self) -> dict[str, float]:
        if self.serving is not None:
            f = self.serving.setups[0]
            return {k: float(v) for k, v in (("per_gpu_gib", f.weights_gib_per_gpu + f.kv_cache_gib_per_gpu),
                                              ("tokens_per_s", f.tokens_per_s_single),
                                              ("kv_tokens", f.kv_capacity_tokens)) if v is not None}
        return {k: float(v) for k, v in (("per_gpu_gib", self.per_gpu_gib),
                                          ("hours", self.estimated_hours_per_epoch or self.estimated_hours_run),
                                          ("tokens_per_s", self.tokens_per_s)) if v is not None}


def _run_serving(ctx: Context, args: DiagnoseArgs, case: ServeCase) -> DiagnoseAnswer:
    cat, said = catalog_for(ctx.catalog, Workload(model=case.model))
    d = serve_diagnose(cat, case)
    head = d.setups[0]
    g = next(x for x in cat.gpus if x.id == head.gpu)
    notes = [(en, zh) for en, zh in said]
    if args.gpu_assumed:
        notes.append((f"The GPU was not named: sized on {g.name} cards; tell me yours.",
                      f"没有说是什么卡：按 {g.name} 估算，告诉我实际的卡可以算得更准。"))
    if args.engine_assumed:
        notes.append(("The inference engine was not named: vLLM's defaults assumed.",
                      "没有说用哪个推理引擎：按 vLLM 的默认设置说明。"))
    return DiagnoseAnswer(observation=args.observation, gpu=g.id, gpu_name=g.name, gpu_count=head.gpus,
                          gpu_memory_gib=g.memory_gib, usable_gib=round(g.memory_gib, 2), sized=True,
                          expected=d.expected, serving=d,
                          assumptions=[*d.assumptions, *[en for en, _ in notes]],
                          assumptions_zh=[*d.assumptions_zh, *[zh for _, zh in notes]])


def _run(ctx: Context, args: DiagnoseArgs) -> DiagnoseAnswer:
    if args.serving is not None:
        return _run_serving(ctx, args, args.serving)
    if args.observation is None:
        from service.errors import InvalidInputError

        raise InvalidInputError("observation: Field required: say what the run did (OOM, hours per epoch, memory "
                                "in use ...).", "Give the observation, or a server's setups under `serving`.")
    w = workload_of(args).model_copy(update={"gpu_count": None})
    cat, said = catalog_for(ctx.catalog, w) if args.model_named else (ctx.catalog, [])
    out = diagnose(cat, w if args.model_named else None, args.gpu, args.gpu_count or 1, args.observation,
                   args.engine, args.mentions_bf16)
    if args.gpu_assumed:
        said = [*said, (f"The GPU was not named: sized on {args.gpu_count or 1}x {args.gpu}; tell me yours.",
                        f"没有说是什么卡：按 {args.gpu_count or 1} 张 {args.gpu} 估算，告诉我实际的卡可以算得更准。")]
    if args.engine_assumed:
        said = [*said, ("The inference engine was not named: vLLM's defaults assumed.",
                        "没有说用哪个推理引擎：按 vLLM 的默认设置说明。")]
    return DiagnoseAnswer.model_validate(with_assumptions(out, said))


def _route(a: Ask) -> dict[str, Any] | Missing:
    observed = a.read.slots.get("observed") or (a.prev.args.get("observation") if a.same_type and a.prev else None)
    served = server_question(a)
    if served is not None:  # a server's run: sized as serving, never as a training job
        return {"observation": observed, **serving_args(a, served)}
    if not observed:
        return Missing("observation")
    engine = a.read.slots.get("engine")
    # '单卡部署qwen2-7b占用了20g显存': memory seen on a server whose engine is not named: vLLM, the default engine
    engine_assumed = engine is None and observed.get("kind") == "memory" and _SERVED.search(a.text) is not None \
        and _TRAINED.search(a.text) is None
    engine = "vllm" if engine_assumed else engine
    bf16 = bool(_BF16.search(a.text))
    named = bool(a.slots.get("model") or a.slots.get("params_b"))
    gpu = subject_gpu(a)
    machine = next(iter(a.extra.get("instance_gpus") or []), None)  # 'on GT4.41XLARGE948': its GPUs
    if gpu is None and machine is not None:
        gpu = machine[0]
    if not named and not (engine and observed.get("kind") == "memory") and not (bf16 and gpu):
        return Missing("model")
    assumed = gpu is None
    ranks = _RANKS.search(a.text)
    count = (subject_count(a, None) or (int(ranks.group("n") or ranks.group("m")) if ranks else None)
             or (int(machine[1]) if machine is not None and machine[1] >= 1 else None)
             or (8 if assumed and _MULTI.search(a.text) else 1))
    slots = without(a.slots, "gpu_include", "gpu_count") if named else {"params_b": 7.0}
    return {**slots, "gpu": gpu or DEFAULT_GPU, "gpu_count": count, "observation": observed, "engine": engine,
            "mentions_bf16": bf16, "model_named": named, "gpu_assumed": assumed, "engine_assumed": engine_assumed}


def _verdict_key(art: dict[str, Any]) -> str:
    kind = art["observation"]["kind"]
    if kind in ("hours", "slow"):
        ratio = art.get("ratio")
        if art.get("data_unknown"):
            return "dia_hours_data"
        if art.get("observed_tokens_per_s") is not None and ratio is not None:
            return "dia_tps_ok" if art["expected"] else ("dia_tps_fast" if ratio < 1 else "dia_tps_slow")
        if ratio is None:
            if art.get("speedup_vs_reference") is not None and art["expected"] is False:
                return "dia_slow_unscaled"
            return "dia_slow_structural" if art["expected"] else "dia_hours_unknown"
        return "dia_hours_ok" if art["expected"] else ("dia_hours_fast" if ratio < 1 else "dia_hours_slow")
    if kind == "oom":
        return "dia_oom_expected" if art["expected"] else "dia_oom_unexpected"
    if kind == "memory":
        return "dia_memory_ok" if art["expected"] else "dia_memory_off"
    if kind == "util":
        if art.get("util_high"):
            return "dia_util_high"
        return "dia_util_expected" if art["expected"] else "dia_util_low"
    return "dia_host_copies" if art.get("host_copies_gib") else "dia_host"


def _cause(c: dict[str, Any], ph: Phrases) -> str:
    text = str(ph["dia_causes"].get(c["code"], c["code"]))
    if "per_gpu_gib" in c:
        text += str(ph["dia_cause_fig"]).format(need=c["per_gpu_gib"])
    return text.format(host=c.get("host_ram_gib", ""), speedup=c.get("speedup", ""), gpus=c.get("gpus", ""),
                       ref=c.get("ref", 1))


def _fix(f: dict[str, Any], ph: Phrases) -> str:
    code = str(f["code"])
    name = ph["dia_fixes"].get(code.split("_")[0] if code.startswith("gpus_") else code, code)
    text = str(name).format(count=f.get("gpu_count"), seq=f.get("seq_len"))
    if "per_gpu_gib" in f:
        text += str(ph["dia_fix_fig"]).format(need=f["per_gpu_gib"], count=f["gpu_count"])
    return text


def _tokens(n: Any, ph: Phrases) -> str:
    if not isinstance(n, (int, float)):
        return ""
    if ph["hours_unit"] == "小时":
        return f"{n / 1e8:.2f} 亿" if n >= 1e8 else f"{n / 1e4:,.0f} 万"
    return f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:,.0f}M"


def _num(x: Any) -> str:
    return "" if x is None else f"{x:g}" if isinstance(x, float) else str(x)


def _render(answer: DiagnoseAnswer, ph: Phrases) -> str:
    if answer.serving is not None:
        zh = ph["hours_unit"] == "小时"
        notes = (answer.assumptions_zh if zh else answer.assumptions)[1:]  # the engine is said on its own line
        return "\n".join(render_serving(answer.serving, ph) + (["", str(ph["assume_title"]),
                                                                *[f"- {n}" for n in notes]] if notes else []))
    art = answer.public()
    if not art.get("sized", True):
        return _render_rule(art, ph)
    obs = art["observation"]
    whole = bool(art.get("whole_run"))
    span = str(ph["dia_span_run" if whole else "dia_span_epoch"]).format(epochs=_num(art.get("epochs")))
    first = str(ph[_verdict_key(art)]).format(
        count=art["gpu_count"], gpu=art["gpu_name"], model=art["model"]["name"], method=method_name(art, ph),
        seq=art["strategy"]["seq_len"], need=art["per_gpu_gib"], usable=art["usable_gib"], span=span,
        hours=obs.get("hours", ""), ratio=art.get("ratio", ""),
        est=art.get("estimated_hours_run" if whole else "estimated_hours_per_epoch", ""),
        tps=art.get("tokens_per_s", ""), seen=obs.get("memory_gb", ""), util=obs.get("util_pct", ""),
        host=art.get("host_ram_needed_gib", ""), speedup=art.get("speedup_vs_reference", ""),
        ranks=art.get("ranks", ""), copies=f"{art.get('host_copies_gib') or 0:,.0f}",
        ram=str(ph["dia_host_ram"]).format(seen=f"{art['host_ram_seen_gb']:,.0f}")
        if art.get("host_ram_seen_gb") and (art.get("host_copies_gib") or 0) * 2**30 / 1e9 > art["host_ram_seen_gb"]
        else "",
        ref=art.get("reference_gpus", 1), tokens=_tokens(art.get("tokens_in_observed_time"), ph),
        data=ph["dia_data_run" if obs.get("whole_run") else "dia_data_epoch"],
        seen_tps=_num(obs.get("tokens_per_s")))
    lines = [first, memory_line(art, ph)]
    items = (art.get("assumptions_zh") if ph["hours_unit"] == "小时" else None) or []
    lines += [f"> {x}" for x in items if "按 " in x and "估算" in x] if items else []
    if art.get("causes"):
        lines += ["", str(ph["dia_cause_title"]), *[f"- {_cause(c, ph)}" for c in art["causes"]]]
    if art.get("fixes"):
        lines += ["", str(ph["dia_fix_title"]), *[f"- {_fix(f, ph)}" for f in art["fixes"]]]
    return "\n".join(lines)


def _render_rule(art: dict[str, Any], ph: Phrases) -> str:
    if art.get("rule") is None:
        return str(ph["ask"]["model"])
    c = art["causes"][0]
    first = str(ph[f"dia_rule_{art['rule']}"]).format(gpu=art["gpu_name"], pct=round(100 * c.get("fraction", 0)),
                                                      reserved=c.get("reserved_gib", ""))
    lines = [first, "", str(ph["dia_fix_title"]), *[f"- {ph['dia_fixes'][f['code']]}" for f in art["fixes"]]]
    items = (art.get("assumptions_zh") if ph["hours_unit"] == "小时" else None) or art.get("assumptions") or []
    return "\n".join(lines + ([""] + [f"> {x}" for x in items] if items else []))


def _summary(o: DiagnoseAnswer) -> str:
    if o.serving is not None:
        d = o.serving
        figs = "; ".join(f"{f.engine} TP{f.tp} on {f.gpus}x {f.gpu}: starts={f.starts}, weights "
                         f"{figure(f.weights_gib_per_gpu, 'GiB')} + KV {figure(f.kv_cache_gib_per_gpu, 'GiB')} per GPU, "
                         f"{figure(f.tokens_per_s_single, 'tok/s')} single" for f in d.setups)
        assumed = f" ({d.engine_assumed})" if d.engine_assumed else ""
        return f"expected={d.expected}, cause {d.cause}, fix {d.fix}{assumed}: {figs}"
    verdict = "unknown" if o.expected is None else o.expected
    if o.sized:
        return (f"expected={verdict}: engine {figure(o.per_gpu_gib, 'GiB')} per GPU on {o.gpu_count}x {o.gpu}, "
                f"{figure(o.training_hours, 'h', missing='hours not sized')}")
    return f"expected={verdict} by rule {o.rule or 'of thumb'} on {o.gpu}"


MODULE = QuestionModule(
    name="diagnose", tool="diagnose", title="Is what I saw expected?", args=DiagnoseArgs, answer=DiagnoseAnswer,
    run=_run, route=_route, render=_render, summary=_summary,
    frames=(("train", "cause"), ("train", "fix"), ("serve", "cause"), ("serve", "fix")),
    description="The user reports what a run did (OOM on N x GPU at length L, T hours an epoch, X GB used, low GPU "
                "utilisation, host RAM overflow) and asks whether it is expected: the engine's figure for that setup, "
                "the verdict, the likely cause and the change that fixes it, with numbers.")
