"""The `diagnose` question type for a server ('lmdeploy tp=4 llama2-70B 显存缓慢增长 OOM', 'tp4能跑，tp8就oom',
'HF能跑 vllm OOM', 'TP8 vs TP4', 'why does FP8 run on A100', '9 tokens/s 正常吗'): the ServeCase read from the
question frame's setups (their engine, card, TP and what each did), whether a question typed otherwise explains a
server's run, and the answer's words. The engine function is service/planner/questions/serve_diagnose.py; the
figures are its."""

from __future__ import annotations

from service.frame import Frame
from service.planner.questions.serve_diagnose import ServeCase, ServeDiagnosis, ServeSetupIn, SetupFigures
from service.questions.base import Ask, Phrases
from service.questions.diagnose_kinds import DEFAULT_GPU, card_of, is_server, kind_of, serve_asked

MAX_GPUS = 64  # a server's GPUs the serving engine sizes
_OUTCOME = {"worked": "worked", "oom": "oom", "error": "oom", "slow": "slow"}


def _has_model(f: Frame) -> bool:
    return any(m.id or m.name or m.params_b for s in f.setups for m in s.models)


def server_question(a: Ask) -> str | None:
    """What a server's post asks to explain (oom, growth, slow, compare, why_runs), None when it is no server's
    run to explain: memory seen (the engine's reservation answers), host RAM killed, a speed with no figure."""
    f = a.frame
    if not is_server(f) or not _has_model(f):
        return None
    asked = serve_asked(f)
    o = f.setup.outcome or next((s.outcome for s in f.setups if s.outcome is not None), None)
    if asked == "memory" or kind_of(o) == "host_oom":
        return None
    if asked == "slow" and o is not None and o.tokens_per_s is None and o.ttft_ms is None and f.load.ttft_ms is None:
        return None if kind_of(o) != "slow" else asked
    return asked


def explains_observation(a: Ask) -> bool:
    """A serving question that states what a server did (memory in use, a TTFT, a speed, an OOM) and asks why or
    whether it is normal: a diagnosis, not a new deployment."""
    f = a.frame
    o = f.setup.outcome or next((s.outcome for s in f.setups if s.outcome is not None), None)
    return is_server(f) and kind_of(o) is not None and f.asked in ("cause", "fix")


def wants_serving_diagnosis(a: Ask) -> bool:
    """A question typed as serving / compare / capacity that explains a server's run (an OOM, a speed, FP8 on a
    card, two TP degrees compared): answered by `diagnose`, never sized as a new deployment. Two layouts compared
    by a serving question stay a serving plan."""
    asked = server_question(a)
    if asked is None:
        return False
    if asked == "slow":
        o = a.frame.setup.outcome
        if o is None or (o.tokens_per_s is None and o.ttft_ms is None):
            return False
    return asked != "compare" or a.read.type in ("compare", "diagnose", "knowledge")


def serving_args(f: Frame, asked: str, model: str) -> dict[str, object]:
    """The ServeCase of the post, and what was assumed (the GPU, the engine)."""
    first = f.setups[0] if f.setups else f.setup
    engine = next((s.knobs.engine for s in f.setups if s.knobs.engine), None)
    engine = "hf" if engine == "transformers" else engine
    gpu = next((g for s in (f.setups or (f.setup,)) if (g := card_of(s, s.outcome))), None)  # named, or by memory
    count = first.hardware.gpu_count
    setups: list[ServeSetupIn] = []
    for s in f.setups or (f.setup,):
        k, h = s.knobs, s.hardware
        tp = k.tp or (first.knobs.tp if len(f.setups) == 1 else None)
        n = (tp or 1) * (k.pp or 1)
        gpus = min(MAX_GPUS, max(n, h.gpu_count or count or 1) if k.tp is None and len(f.setups) <= 1 else (
            h.gpu_count if k.tp is None and h.gpu_count else n))
        o = s.outcome
        setups.append(ServeSetupIn(
            engine=("hf" if k.engine == "transformers" else k.engine) or engine or "vllm",
            gpu=card_of(s, o) or gpu or DEFAULT_GPU, gpus=gpus, tp=tp, pp=k.pp,
            weights=k.weights or (s.model.weights if s.model else None), kv_dtype=k.kv_dtype or "auto",
            max_model_len=k.max_model_len, mem_fraction=k.gpu_memory_utilization, enforce_eager=False,
            outcome=_OUTCOME.get(o.status, "unknown") if o is not None else "unknown",
            gpus_assumed=(h.gpu_count or count) is None and tp is None and k.pp is None,
            tokens_per_s=o.tokens_per_s if asked == "slow" and o is not None else None,
            concurrency=f.load.concurrency, seen_running=o is not None and o.seen_running))
    if asked in ("oom", "growth") and not any(x.outcome == "oom" for x in setups):
        setups[-1] = setups[-1].model_copy(update={"outcome": "oom"})
    case = ServeCase(model=model, setups=setups, asked=asked,
                     input_tokens=f.load.input_tokens, output_tokens=f.load.output_tokens)
    return {"model": model, "serving": case.model_dump(), "gpu": setups[0].gpu, "gpu_count": setups[0].gpus,
            "gpu_assumed": gpu is None, "engine_assumed": engine is None, "engine": engine or "vllm",
            "setup": f.setup.model_copy(update={"models": ()}).model_dump(exclude_defaults=True),
            "load": f.load.model_dump(exclude_none=True)}


# --- the answer ---------------------------------------------------------------------------------------------------
QUOTE_MIN = 12  # an engine's own message quoted in its reason is at least this long


def _quoted(reason: str) -> str | None:
    """The engine's own message its reason quotes ('... refuses TP6: "Total number of attention heads ..."')."""
    start = reason.find('"')
    end = reason.find('"', start + 1) if start >= 0 else -1
    return reason[start + 1:end] if end - start - 1 >= QUOTE_MIN else None


# ---------------------------------------------------------------------------------------------------


def _label(f: SetupFigures, ph: Phrases) -> str:
    engine = ph["engine_names"].get(f.engine, f.engine)
    shape = f"TP{f.tp}" + (f" x PP{f.pp}" if f.pp > 1 else "")
    where = f"{f.gpus} x {f.gpu_name}"
    return f"{engine} {shape}, {where}" if f.engine not in ("hf", "ollama", "llamacpp") else f"{engine}, {where}"


def _num(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{x:,.{digits}f}"


def _state(f: SetupFigures, ph: Phrases) -> str:
    p = ph["sdia"]
    if f.gpu_share is not None and f.engine in ("ollama", "llamacpp"):
        return str(p["state_local"]).format(share=round(100 * f.gpu_share), tps=_num(f.tokens_per_s_single))
    if not f.starts:
        return str(p["state_fails"])
    if f.tokens_per_s_at_load:
        return str(p["state_starts_load"]).format(tps=_num(f.tokens_per_s_single), load=_num(f.tokens_per_s_at_load, 0),
                                                   conc=f"{f.concurrency or 0:g}")
    return str(p["state_starts"]).format(tps=_num(f.tokens_per_s_single))


def _cause(code: str, d: ServeDiagnosis, f: SetupFigures, ph: Phrases) -> str:
    text = str(ph["sdia"]["causes"].get(code, code))
    setups = d.setups
    fast = setups[d.faster] if d.faster is not None else f
    slow = setups[1 - d.faster] if d.faster is not None and len(setups) == 2 else f
    est = f.tokens_per_s_at_load or f.tokens_per_s_single
    zh = ph["hours_unit"] == "小时"
    reason = f.reason_zh if zh and f.reason_zh else f.reason.replace('"', "")
    return text.format(
        gpus=f.gpus, tp=f.tp, model=d.model_name, w=_num(f.weights_gib_per_gpu),
        act=_num(f.activation_peak_gib), frac=f"{f.mem_fraction or 0.9:g}",
        kv=_num(f.kv_cache_gib_per_gpu), fits=f"{f.max_model_len_fits:,}", ctx=f"{f.max_model_len:,}",
        graph=_num(f.graph_gib), reason=reason, pct=round(100 * (f.mem_fraction or 0.8)),
        label=_label(f, ph), gpu=f.gpu_name, est=_num(est), seen=_num(f.observed_tokens_per_s),
        ratio=d.ratio if d.ratio is not None else "—",
        cpu=round(100 * (1 - (f.gpu_share or 1.0))),
        a=fast.tp, b=slow.tp, share=f"1/{max(1, fast.tp // max(1, slow.tp))}",
        fast=_num(fast.tokens_per_s_single), slow=_num(slow.tokens_per_s_single),
        link=str(ph["sdia"]["causes"]["link_nvlink" if fast.nvlink else "link_pcie"]).format(gpu=fast.gpu_name))


def _focus(d: ServeDiagnosis) -> SetupFigures:
    """The setup the verdict is about: the failing one, else the first."""
    failing = [f for f in d.setups if f.outcome == "oom"]
    if d.asked in ("oom", "growth") and failing:
        return failing[0]
    return d.setups[d.faster] if d.faster is not None else d.setups[0]


def render_serving(d: ServeDiagnosis, ph: Phrases) -> list[str]:
    """The answer's lines: the verdict and the cause first, the engine's words, each setup's figures, the fix."""
    p = ph["sdia"]
    f = _focus(d)
    zh = ph["hours_unit"] == "小时"
    if d.asked == "compare" and d.expected is None and d.faster is not None:
        opener = str(p["compare_open"]).format(faster=_label(d.setups[d.faster], ph))
    else:
        opener = str(p["expected"] if d.expected else p["unexpected"]) if d.expected is not None else ""
    lines = [opener + _cause(d.cause, d, f, ph) + ("。" if zh else ".")]
    quoted = _quoted(f.reason)
    if quoted and d.asked != "why_runs":
        lines.append(str(p["message"]).format(message=quoted))
    lines.append(str(p["engine"]).format(engine=d.engine_assumed_zh if zh else d.engine_assumed))
    rows = [str(p["setup"]).format(label=_label(x, ph), w=_num(x.weights_gib_per_gpu),
                                   kv=_num(x.kv_cache_gib_per_gpu), tokens=f"{x.kv_capacity_tokens:,}",
                                   ctx=f"{x.max_model_len:,}", state=_state(x, ph))
            for x in d.setups]
    lines += [""] + list(dict.fromkeys(rows))  # setups that size alike (two names of one model) are said once
    if d.fix and d.asked != "compare":
        lines += ["", str(p["fix_title"])]
        fixed = d.fixed
        if fixed is not None and fixed.starts:
            lines.append(str(p["fixed"]).format(fix=d.fix, kv=_num(fixed.kv_cache_gib_per_gpu),
                                                tokens=f"{fixed.kv_capacity_tokens:,}", ctx=f"{fixed.max_model_len:,}"))
        elif fixed is not None:
            lines.append(str(p["fixed_still"]).format(fix=d.fix, reason=(zh and fixed.reason_zh) or fixed.reason))
        else:
            lines.append(str(p["fix"]).format(fix=d.fix))
    if d.causes:
        lines += ["", str(p["more_title"]), *[f"- {_cause(c, d, f, ph)}" for c in d.causes]]
    return lines
