"""The diagnose question type's routing: the question frame (service/frame.py) read into the arguments of a training
diagnosis or a server's, or the one slot to ask for. Only the frame: the asked setup's model, method, knobs,
hardware and outcome, the other setups a post contrasts ('TP4 works, TP8 OOMs'), the data and the load.

    is_server(frame)        a server's run: the frame's task is serving, or an inference engine runs it
    serve_asked(frame)      what a server's post asks: oom | growth | slow | compare | why_runs | memory
    route(ask)              DiagnoseArgs as a dict (training or serving), or Missing(slot)
"""

from __future__ import annotations

from service.frame import Frame, Outcome, Setup
from service.questions.base import Ask, Missing
from service.questions.diagnose_kinds import (
    _TRAIN_KIND,
    DEFAULT_GPU,
    _outcome,
    card_of,
    is_server,
    kind_of,
    serve_asked,
)


def _model_name(f: Frame) -> tuple[str | None, float | None]:
    for s in (f.setup, *f.setups):
        m = s.model
        if m is not None:
            if m.id:
                return m.id, None
            if m.params_b and m.estimated:
                return None, m.params_b
            return m.name, m.params_b
    return None, None


def _machine(a: Ask) -> tuple[str, int] | None:
    """The GPU and count of an instance the post names ('on GT4.41XLARGE948')."""
    named = a.extra.get("instance_gpus")
    if not isinstance(named, list) or not named:
        return None
    gpu, count = named[0]
    return str(gpu), int(count)


def _workload(f: Frame, s: Setup) -> dict[str, object]:
    k, d = s.knobs, f.data
    zero = 0 if k.strategy in ("ddp", "single") and k.zero_stage is None else k.zero_stage
    out = {"method": s.method, "stage": s.objective, "seq_len": k.seq_len, "micro_batch": k.micro_batch,
           "zero_stage": zero, "lora_rank": k.lora_rank, "quant_bits": k.quant_bits if s.method in ("qlora", "lora")
           else None, "samples": d.samples, "tokens": d.tokens, "avg_tokens_per_sample": d.avg_tokens_per_sample,
           "dataset_gb": d.dataset_gb, "epochs": d.epochs, "precision": k.precision, "optimizer": k.optimizer,
           "attention": k.attention, "loss": k.loss, "grad_ckpt": k.checkpointing}
    return {key: v for key, v in out.items() if v is not None}


def _observation(o: Outcome, whole_run: bool) -> dict[str, object]:
    kind = _TRAIN_KIND[kind_of(o) or "oom"]
    figures = {"memory_gb": o.memory_gb, "hours": o.hours, "util_pct": o.util_pct, "tokens_per_s": o.tokens_per_s}
    out: dict[str, object] = {"kind": kind, **{k: v for k, v in figures.items() if v is not None and v > 0}}
    if kind == "util" and o.util_pct is not None and o.util_pct > 100:
        out.pop("util_pct")  # an impossible figure: said by the cause model, not validated away
    if whole_run and o.hours:
        out["whole_run"] = True
    return out


def _general(f: Frame, o: Outcome) -> dict[str, object]:
    """The post's setups for the causes that need no size (service/planner/causes/general.py)."""
    kind = kind_of(o) or "oom"
    asked = f.setup
    if asked.outcome is None or asked.outcome.kind is None:  # the outcome sits on another setup: the asked is it
        asked = next((x for x in f.setups if x.outcome is o), asked)
    others = [x.model_copy(update={"models": ()}) for x in f.setups if x is not asked]
    return {"kind": kind, "serving": is_server(f), "asked": asked.model_copy(update={"models": ()}),
            "others": others}


def _with_general(args: dict[str, object] | Missing, f: Frame, o: Outcome | None) -> dict[str, object] | Missing:
    if isinstance(args, Missing) or o is None or kind_of(o) is None:
        return args
    return {**args, "general": _general(f, o)}


def _general_only(f: Frame, o: Outcome) -> dict[str, object] | Missing:
    """No model named: the causes the stated setup points to answer, on the card as named (or the default); the
    model is asked for when the setup points to none."""
    from service.questions.diagnose_answer import GeneralCase
    from service.questions.diagnose_general import has_causes

    if not has_causes(GeneralCase.model_validate(_general(f, o))):
        return Missing("model")
    gpu = card_of(f.setup, o)
    return {"params_b": 7.0, "gpu": gpu or DEFAULT_GPU, "gpu_count": f.setup.hardware.gpu_count or 1,
            "model_named": False,
            "gpu_assumed": gpu is None, "observation": _observation(o, False), "general": _general(f, o),
            "setup": f.setup.model_copy(update={"models": ()}).model_dump(exclude_defaults=True)}


def route(a: Ask) -> dict[str, object] | Missing:
    f = a.frame
    return _with_general(_route(a), f, _outcome(f))


def _route(a: Ask) -> dict[str, object] | Missing:
    f = a.frame
    o = _outcome(f)
    model, params_b = _model_name(f)
    s = f.setup
    if is_server(f) and (model or params_b):
        from service.questions.diagnose_serving import serving_args

        asked = serve_asked(f)
        if asked not in (None, "memory"):
            return serving_args(f, asked, model or f"{params_b:g}B")
        if asked == "memory" and o is not None:
            return _served_memory(f, s, o, model, params_b)
    if o is None or kind_of(o) is None:
        return Missing("observation")
    named = bool(model or params_b)
    engine = next((x.knobs.engine for x in f.setups if x.knobs.engine), None)
    gpu = card_of(s, o)
    machine = _machine(a) if gpu is None else None
    if gpu is None and machine is not None:
        gpu = machine[0]
    kind = kind_of(o)
    bf16 = s.knobs.precision in ("amp-bf16", "pure-bf16") or s.knobs.weights == "bf16"
    if not named and not (engine and kind == "memory") and not (bf16 and gpu):
        return _general_only(f, o)
    hw = s.hardware
    count = hw.gpu_count or (hw.nodes or 1) * (hw.gpus_per_node or 0) or (machine[1] if machine else None) or 1
    whole = bool((a.read.slots.get("observed") or {}).get("whole_run"))  # the frame has no field for it yet
    args: dict[str, object] = {
        **(_workload(f, s) if named else {"params_b": 7.0}),
        "gpu": gpu or DEFAULT_GPU, "gpu_count": count, "observation": _observation(o, whole), "engine": engine,
        "mentions_bf16": bf16, "model_named": named, "gpu_assumed": gpu is None, "engine_assumed": False,
        "setup": s.model_copy(update={"models": ()}).model_dump(exclude_defaults=True),
        "load": f.load.model_dump(exclude_none=True)}
    if named:
        args["model" if model else "params_b"] = model or params_b
    return args


def _served_memory(f: Frame, s: Setup, o: Outcome, model: str | None, params_b: float | None) -> dict[str, object]:
    """Memory seen on a server: the engine's reservation answers (vLLM's defaults when no engine is named)."""
    engine = next((x.knobs.engine for x in f.setups if x.knobs.engine), None)
    gpu = card_of(s, o)
    return {"model": model or f"{params_b:g}B", "gpu": gpu or DEFAULT_GPU,
            "gpu_count": s.hardware.gpu_count or 1, "observation": _observation(o, False),
            "engine": engine or "vllm", "engine_assumed": engine is None, "gpu_assumed": gpu is None,
            "model_named": True, "served": True,
            "setup": s.model_copy(update={"models": ()}).model_dump(exclude_defaults=True),
            "load": f.load.model_dump(exclude_none=True)}
