"""Answers written from typed answers with the phrases in prompts/answer.<lang>.yaml. Every figure in the text is
copied from an answer (the plan, a passage, a catalog row); nothing is computed here but formatting."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from service.labels import (
    autolink,
    confidence_label,
    host_text,
    mfu_basis,
    per_unit,
    price_when,
    public_source,
    unpublished,
)
from service.planner.training_types import PlanPrice, TrainingCandidate, TrainingPlan
from service.questions.parts import PassageRef
from service.questions.phrases import Phrases
from service.questions.pick_why import other_cloud_lines


class Stated(Protocol):
    """A note or a reason the engine states in both languages."""

    message: str
    message_zh: str


def _n(x: float, digits: int = 1) -> str:
    return f"{x:,.{digits}f}"


def _money(x: float | None, ph: Phrases) -> str:
    """A cost, or the 'price on request' phrase where the plan has no public price for the option."""
    return ph.name("billing_names", "on_request", "price on request") if x is None else f"¥{_n(x, 0)}"


def _tokens(x: float) -> str:
    for unit, div in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if x >= div:
            return f"{x / div:.3g}{unit}"
    return f"{x:.0f}"


def _price(p: PlanPrice, ph: Phrases) -> str:
    return f"¥{p.price_cny:,.2f}{per_unit(p.unit, ph.lang)}"


def _label(c: TrainingCandidate, ph: Phrases) -> str:
    return (c.strategy.label_zh if ph.zh else c.strategy.label) or c.strategy.label


def _pick_rows(plan: TrainingPlan, ph: Phrases) -> list[str]:
    by_type = {c.instance_type: c for c in plan.candidates}
    rows = [ph.text("pick_header"), "|" + "---|" * 9]
    for cloud, itype in plan.picks.items():
        c = by_type[itype]
        nodes = f" × {c.nodes}" if c.nodes > 1 else ""
        rows.append(
            f"| {ph.name('cloud_names', cloud)} | {itype}{nodes} | {c.gpu_count:g} × {c.gpu_name} | "
            f"{host_text(c.vcpus, c.memory_gib, ph.lang)} | {_label(c, ph)} | "
            f"{c.memory_per_gpu_gib} / {c.gpu_memory_gib:g} GiB | {_n(c.training_hours)} {ph.text('hours_unit')} | "
            f"{ph.name('billing_names', c.billing)} | {_money(c.total_cost_cny, ph)} |")
    return rows


def error_band(pct: float | None, rows: int | None, ph: Phrases) -> str:
    """'（估算误差约 ±13.7 %，依据同类实测 35 条）': the figure's expected error, from the measured runs of its
    class (service/sizing/error_table.py); empty when no class holds enough runs."""
    if pct is None or not rows:
        return ""
    return ph.text("expected_error", pct=round(pct), rows=rows)


def _memory(c: TrainingCandidate, ph: Phrases) -> list[str]:
    m = c.memory
    usable = round(c.gpu_memory_gib * 0.92, 1)
    return [ph.text("memory_title", instance=c.instance_type), ph.text(
        "memory_line", weights=m.weights_gib, gradients=m.gradients_gib, optimizer=m.optimizer_gib,
        activations=m.activations_gib, overhead=m.overhead_gib, total=m.per_gpu_gib,
        available=f"{c.gpu_memory_gib:g}", usable=usable, verdict=ph.text("fits"))
        + error_band(m.expected_error_pct, m.expected_error_rows, ph)]


def _time(c: TrainingCandidate, ph: Phrases) -> list[str]:
    slow = c.slowdown
    slowdown = f" (× {slow:g} offload)" if slow and slow > 1 else ""
    line = ph.text(
        "time_line", tokens=_tokens(c.work_units), flops_per_token=_n(c.flops_per_token / 1e9, 2),
        gpus=c.total_gpus, peak=f"{c.peak_tflops:g}", mfu=c.mfu, scaling=c.scaling_efficiency,
        hours=_n(c.training_hours), slowdown=slowdown)
    line += error_band(c.throughput_expected_error_pct, c.throughput_expected_error_rows, ph)
    return [ph.text("time_title"), line, ph.text("mfu_source", source=mfu_basis(c.mfu_source, ph.lang))]


def _cost(c: TrainingCandidate, ph: Phrases) -> list[str]:
    out = [ph.text("cost_title")]
    lines = {str(k): v for k, v in c.cost_cny.items()}
    for billing, line in lines.items():
        p = line.price
        fields = {"billing": ph.name("billing_names", billing), "price": _price(p, ph),
                  "source": public_source(p.source, p.confidence, ph.lang),
                  "as_of": price_when(p, ph.lang), "confidence": confidence_label(p.confidence, ph.lang)}
        # compared with the mode the plan chose (or on-demand when it chose monthly): what the reader would pay
        cheaper = lines.get(c.billing if c.billing != "monthly" else "on_demand")
        if billing == "monthly" and cheaper is not None and cheaper.total_cny < line.total_cny:
            # a job of hours on a monthly subscription: say it does not pay, not a month's price as "this job"
            out.append(ph.text("cost_line_monthly_not_worth", **fields, hours=_n(c.training_hours),
                               other=ph.name("billing_names", cheaper.billing),
                               other_total=_n(cheaper.total_cny, 0)))
            continue
        out.append(ph.text("cost_line", **fields, total=_n(line.total_cny, 0), monthly=_n(line.monthly_cny, 0)))
    out.append(ph.text("quote", link=c.quote_link))
    return out


def _verdicts(plan: TrainingPlan, c: TrainingCandidate, ph: Phrases) -> list[str]:
    w = plan.workload
    out = []
    if w.budget_cny is None:
        out.append(ph.text("budget_none"))
    else:
        budget = ph.group("period_names").text(w.budget_period, budget=_n(w.budget_cny, 0))
        spend = c.monthly_cost_cny if w.budget_period == "month" else c.total_cost_cny
        if spend is not None:
            key = "budget_ok" if c.within_budget else "budget_no"
            out.append(ph.text(key, budget=budget, instance=c.instance_type, spend=_money(spend, ph)))
    if w.deadline_hours is not None:
        key = "deadline_ok" if c.meets_deadline else "deadline_no"
        out.append(ph.text(key, hours=_n(c.training_hours), deadline=f"{w.deadline_hours:g}"))
    return out


def _alternatives(plan: TrainingPlan, ph: Phrases, lang: str) -> list[str]:
    by_type = {c.instance_type: c for c in plan.candidates}
    alternatives = {str(k): v for k, v in plan.alternatives.items()}
    out = [ph.text("alt_title")]
    for kind in ("cheaper", "faster"):
        itype = alternatives.get(kind)
        if itype:
            c = by_type[itype]
            out.append(ph.text(f"alt_{kind}", instance=itype, gpus=f"{c.gpu_count:g} × {c.gpu}",
                               hours=_n(c.training_hours), cost=_money(c.total_cost_cny, ph)))
    top = plan.candidates[0]
    why = plan.pick_reasons.get(top.cloud)
    if why is not None and why.instance_type == top.instance_type:
        out.append(ph.text("alt_why", instance=why.instance_type, reason=_msg(why, lang)))
    w = plan.workload
    for key, given, ref in (("alt_fastest_budget", w.budget_cny, plan.fastest_within_budget),
                            ("alt_cheapest_deadline", w.deadline_hours, plan.cheapest_within_deadline)):
        if given is not None and ref is not None:  # the frontier's answer: any cluster size, any family
            out.append(ph.text(key, instance=ref.instance_type, nodes=ref.nodes, gpus=f"{ref.total_gpus} × {ref.gpu}",
                               hours=_n(ref.hours), cost=_money(ref.cost_cny, ph)))
    if len(out) == 1:
        out.append(ph.text("alt_none"))
    return out


def _host(c: TrainingCandidate, ph: Phrases) -> list[str]:
    h = c.host
    gone = unpublished(ph.lang)  # a family known only from sightings: its host is not published
    verdict = (gone if h.vcpu_ok is None or h.ram_ok is None
               else ph.text("host_ok") if h.vcpu_ok and h.ram_ok else ph.text("host_low"))
    out = [ph.text("host_line", instance=c.instance_type, vcpus=gone if c.vcpus is None else c.vcpus,
                   ram=gone if c.memory_gib is None else f"{c.memory_gib:g}",
                   vpg=gone if h.vcpu_per_gpu is None else f"{h.vcpu_per_gpu:g}", need=h.ram_recommended_gib,
                   verdict=verdict)]
    if h.nodes > 1:
        out.append(ph.text("net_multi_rdma" if h.rdma else "net_multi_tcp", nodes=h.nodes, link=h.interconnect))
    elif c.gpu_count <= 1:
        out.append(ph.text("net_one_gpu"))
    else:
        out.append(ph.text("net_single", link=h.interconnect))
    return out


def _msg(note: Stated, lang: str) -> str:
    return note.message_zh if lang == "zh" else note.message


def render_plan(plan: TrainingPlan, lang: str, ph: Phrases, citations: Sequence[PassageRef]) -> str:
    if plan.infeasible or not plan.candidates:
        reason = (plan.infeasible_zh if lang == "zh" else None) or plan.infeasible or ""
        return ph.text("infeasible", reason=reason)
    job, model = plan.job, plan.model
    top = plan.candidates[0]
    method = ph.group("method_names").text(job.method)
    if model.kind in ("cnn", "diffusion", "vision_transformer"):
        title = ph.text("title_images", model=model.name, method=method,
                        samples=_tokens(job.samples_per_epoch * job.epochs), epochs=f"{job.epochs:g}")
    else:
        title = ph.text("title", model=model.name, method=method, tokens=_tokens(job.tokens_total),
                        epochs=f"{job.epochs:g}")
    lines = [title, ""]
    lines += _pick_rows(plan, ph) + [""] + other_cloud_lines(plan, ph) + _verdicts(plan, top, ph) + [""]
    lines += _memory(top, ph) + [""] + _time(top, ph) + [""] + _cost(top, ph) + [""]
    lines += _alternatives(plan, ph, lang) + [""]
    codes: dict[str, Stated] = {}
    for n in top.warnings:
        codes.setdefault(n.code, n)
    warn = [f"- ⚠️ {_msg(n, lang)}" for n in codes.values()]
    if warn:
        lines += [ph.text("warn_title"), *warn, ""]
    lines += [ph.text("advice_title"), *_host(top, ph), *[f"- {_msg(n, lang)}" for n in plan.notes], ""]
    assumptions = (plan.assumptions_zh if lang == "zh" else None) or plan.assumptions
    if assumptions:
        lines += [ph.text("assume_title"), *[f"- {a}" for a in assumptions], ""]
    lines += render_citations(citations, ph) + [ph.text("offer")]
    return autolink("\n".join(lines).strip())


def render_citations(citations: Sequence[PassageRef], ph: Phrases) -> list[str]:
    if not citations:
        return []
    out = [ph.text("cite_title")]
    out += [f"- [{c.title or c.id}]({knowledge_href(c.id)})" for c in citations]
    return out + [""]


def knowledge_href(chunk_id: str) -> str:
    """Where the page (and any Markdown reader of the API) opens a cited section: /knowledge/<file>#<anchor>."""
    source, _, anchor = chunk_id.partition("#")
    path = source.removeprefix("knowledge/")
    return f"/knowledge/{path}" + (f"#{anchor}" if anchor else "")


def render_scope(ph: Phrases, other_clouds: list[str], lang: str) -> str:
    """An out-of-scope question: what the product answers instead; a cloud it does not cover is named as such."""
    from service.lexicon import label

    lines = [ph.text("scope")]
    if other_clouds:
        names = ("、" if lang == "zh" else ", ").join(label("clouds", c, lang) for c in other_clouds)
        lines.append(ph.text("scope_cloud", clouds=names))
    return "\n\n".join(lines)
