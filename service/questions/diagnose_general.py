"""A diagnosis the engine cannot size: no model named, or one the catalog does not hold ('TRELLIS', 'Whisper
large-v2'). The causes the stated setup points to answer (service/planner/causes/general.py): the verdict and the
deciding cause first, its fix, the next likeliest cause, then the model asked for so the figures can follow.
Every sentence from the phrase table (prompts/questions/diagnose.yaml, `dg`)."""

from __future__ import annotations

from service.catalog.schema import GpuSpec
from service.errors import AdvisorError
from service.planner.causes.general import Signs, general_diagnosis
from service.planner.causes.types import Cause, Diagnosis
from service.planner.questions.fit import gpu_for
from service.questions.base import Context, Phrases
from service.questions.diagnose_answer import DiagnoseAnswer, DiagnoseArgs, GeneralCase
from service.questions.diagnose_kinds import DEFAULT_GPU


def signs_of(case: GeneralCase, gpu: GpuSpec | None, ctx: Context | None = None) -> Signs:
    others = tuple(_card(ctx, x.hardware.gpu) if ctx is not None and x.hardware.gpu else None for x in case.others)
    return Signs(kind=case.kind, serving=case.serving, asked=case.asked, others=tuple(case.others), gpu=gpu,
                 other_gpus=others)


# Causes that apply to any slow run whatever it states: alone they do not answer a post that names no model (the
# model is asked for, with the guide); after a sized diagnosis or for a model the catalog lacks they still help
FALLBACK = frozenset({"g_small_batch", "g_data_bound", "g_decode_bound"})


def stated_causes(d: Diagnosis | None) -> bool:
    """The diagnosis names a cause that rests on what the post states, not only on its kind."""
    return d is not None and any(c.code not in FALLBACK for c in d.causes)


def has_causes(case: GeneralCase) -> bool:
    """Whether the stated setup points to any cause (the card's catalog entry aside)."""
    other_card = any(x.hardware.gpu for x in case.others) and case.asked.hardware.gpu
    d = general_diagnosis(signs_of(case, None))
    return bool(stated_causes(d) or case.asked.knobs.attention == "flash" or other_card)


def _card(ctx: Context, name: str) -> GpuSpec | None:
    try:
        return gpu_for(ctx.catalog, name)[0]
    except AdvisorError:
        return None


def run_general(ctx: Context, args: DiagnoseArgs, unknown: str | None = None) -> DiagnoseAnswer:
    assert args.general is not None
    named = not args.gpu_assumed
    g = _card(ctx, args.gpu)
    if g is None:  # a card the catalog lacks: the answer's card fields only, no cause reads it
        g, named = _card(ctx, DEFAULT_GPU) or ctx.catalog.gpus[0], False
    d = general_diagnosis(signs_of(args.general, g if named else None, ctx))
    return DiagnoseAnswer(observation=args.observation, gpu=g.id, gpu_name=g.name, gpu_count=args.gpu_count or 1,
                          gpu_memory_gib=g.memory_gib, usable_gib=round(g.memory_gib, 2), sized=False,
                          expected=d.verdict, general=d, unknown_model=unknown)


ALSO_MAX = 2  # causes that need no size added after a sized diagnosis


def general_also(ctx: Context, args: DiagnoseArgs, answer: DiagnoseAnswer) -> DiagnoseAnswer:
    """A sized diagnosis with the causes the stated setup points to that it does not name itself."""
    if args.general is None:
        return answer
    g = _card(ctx, answer.gpu)
    named = {c.code for c in answer.diagnosis.causes} if answer.diagnosis is not None else set()
    named |= {c.code for c in answer.causes}
    d = general_diagnosis(signs_of(args.general, g, ctx))
    extra = [c for c in d.causes if c.code.removeprefix("g_") not in named][:ALSO_MAX]
    if not extra:
        return answer
    # the sized figures left the verdict open: the stated setup's deciding cause gives it
    decides = answer.expected is None and d.verdict is not None and d.causes[0] in extra
    return answer.model_copy(update={"general_also": extra, "general_leads": decides,
                                     "expected": d.verdict if decides else answer.expected})


def lead_lines(answer: DiagnoseAnswer, ph: Phrases) -> list[str]:
    """The verdict and the cause that gave it, when a cause that needs no size decided it: first, with its fix."""
    if not answer.general_leads or not answer.general_also:
        return []
    p = ph["dg"]
    top = answer.general_also[0]
    verdict = p["verdict"]["yes" if answer.expected else "no"]
    fix = _fix(top, ph)
    return [f"{verdict}{_cause(top, ph, answer.gpu_name)}{p['end']}", *([fix] if fix else []), ""]


def also_lines(answer: DiagnoseAnswer, ph: Phrases) -> list[str]:
    """The lines of the causes that need no size, after a sized diagnosis (the one that leads is not repeated)."""
    out: list[str] = []
    for c in answer.general_also[1 if answer.general_leads else 0:]:
        out.append(str(ph["dg"]["also"]).format(cause=_cause(c, ph, answer.gpu_name)))
        fix = _fix(c, ph)
        out += [fix] if fix else []
    return ["", *out] if out else []


def _cause(c: Cause, ph: Phrases, gpu: str) -> str:
    values = {k: (f"{v:.1f}" if k == "cc" else f"{v:g}") for k, v in c.detail.items()}
    return str(ph["dg"]["cause"].get(c.code, c.code)).format(gpu=gpu, **values)


def _fix(c: Cause, ph: Phrases) -> str:
    if c.fix is None:
        return ""
    p = ph["dg"]
    setting = str(p["setting"]).format(setting=c.fix.setting) if c.fix.setting else ""
    return str(p["fix_line"]).format(fix=p["fix"].get(c.fix.code, c.fix.code), setting=setting)


def render_general(answer: DiagnoseAnswer, ph: Phrases) -> str:
    d: Diagnosis | None = answer.general
    p = ph["dg"]
    lines: list[str] = []
    unknown = [str(p["unknown"]).format(model=answer.unknown_model)] if answer.unknown_model else []
    if d is None or not d.causes:
        return "\n".join([str(p["ask_model"]), *unknown])
    gpu = answer.gpu_name
    verdict = {True: p["verdict"]["yes"], False: p["verdict"]["no"], None: p["verdict"]["none"]}[d.verdict]
    top, rest = d.causes[0], d.causes[1:3]
    lines.append(f"{verdict}{_cause(top, ph, gpu)}{p['end']}")
    fix = _fix(top, ph)
    lines += [fix] if fix else []
    for c in rest:
        lines.append(str(p["also"]).format(cause=_cause(c, ph, gpu)))
        more = _fix(c, ph)
        lines += [more] if more else []
    check = p["check"].get(top.code)
    if d.verdict is None and rest and check:  # two likely causes: the one figure that tells them apart
        lines.append(str(p["tell"]).format(check=check))
    lines += ["", str(p["ask_model"]), *unknown]
    return "\n".join(lines)

