"""Workload x catalog -> feasible candidates per cloud, costed and ranked; rejected options keep their reason."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import date
from functools import lru_cache

from service.calibration.store import calibration_factors
from service.catalog.loader import Catalog
from service.catalog.queries import resolve_gpu
from service.catalog.schema import GpuSpec, InstanceRow
from service.labels import confidence_label
from service.planner.advice import infeasible_hint, plan_notes
from service.planner.candidate import Candidate, FrontierPoint, PlanResult, mark_slower
from service.planner.costing import (
    Quote,
    budget_verdict,
    choose_billing,
    cost_lines,
    deadline_verdict,
    price_notes,
    quote,
    quote_notes,
    reference_notes,
)
from service.planner.resolve import Job, resolve_job
from service.planner.room import room_hint
from service.planner.settings import framework_note, settings_for
from service.planner.strategy import Fit, NoFit, choose
from service.sizing.host import Note, gpu_notes, host_notes
from service.sizing.throughput import Cluster, training_time
from service.sizing.types import TimeEstimate, TrainSetup
from service.workload import Workload

__all__ = ["Candidate", "FrontierPoint", "PlanResult", "plan"]


def _gpu_filter(w: Workload, cat: Catalog) -> tuple[set[str], set[str], list[str]]:
    notes: list[str] = []
    include, exclude = set(), set()
    for name in w.gpu_include:
        g, note = resolve_gpu(name, cat.gpus)
        include |= _family_ids(g, cat)
        notes += [note] if note else []
    for name in w.gpu_exclude:
        g, _ = resolve_gpu(name, cat.gpus)
        exclude |= _family_ids(g, cat)
    return include, exclude, notes


def _family_ids(g: GpuSpec, cat: Catalog) -> set[str]:
    """'A100' as a filter means every A100 form factor the clouds sell, not only the default one."""
    stem = g.id.split("-")[0]
    return {x.id for x in cat.gpus if x.id.split("-")[0] == stem}


@lru_cache(maxsize=4096)
def _at_seq(setup: TrainSetup, seq_len: int) -> TrainSetup:
    """The setup at the mean sequence length (cached: dataclass replace is a hot spot of the planner)."""
    return setup if setup.seq_len == seq_len else replace(setup, seq_len=seq_len)


def _time(job: Job, inst: InstanceRow, gpu: GpuSpec, fit: Fit, cal: dict[str, float]) -> TimeEstimate:
    s = fit.strategy
    trainable_fraction = fit.memory.trainable_params / max(1.0, job.model.params_published_b * 1e9)
    time_setup = _at_seq(s.setup, job.avg_seq_len)
    cluster = Cluster(s.gpus_per_node, s.nodes, inst.rdma, inst.network_gbps, inst.vcpus)
    return training_time(job.model, gpu, time_setup, job.tokens_total, s.total_gpus, 1.0, trainable_fraction,
                         s.gpu_fraction, job.samples_total, cluster, cal.get(gpu.id, 1.0))


def _candidate(job: Job, w: Workload, cat: Catalog, inst: InstanceRow, gpu: GpuSpec, fit: Fit,
               today: date, max_age: int, t: TimeEstimate) -> Candidate | str:
    s = fit.strategy
    hours = t.hours
    lines = cost_lines(inst, s.nodes, hours, cat.prices)
    line, bill_notes = choose_billing(lines, w.billing)
    q: Quote | None = None
    if line is None:  # price on request: sized and timed like any other, never dropped
        q = quote(inst, s.nodes, hours, cat.prices)
        warnings = quote_notes(q, inst)
    else:
        warnings = [*bill_notes, *price_notes(line, inst.cloud, today, max_age)]
    warnings += reference_notes(gpu.id, gpu.id, cat.reference_prices)
    warnings += gpu_notes(gpu, s.gpus_per_node, s.nodes, inst.rdma)
    warnings += host_notes(inst.vcpus, inst.memory_gib, inst.gpu_count, inst.gpu_memory_gib)
    if inst.is_slice:
        warnings.append(Note("vgpu_slice", "A vGPU slice shares one physical card: throughput is not guaranteed.",
                             "vGPU 切片与他人共享一张物理卡，性能无保障。"))
    if inst.sale_status in ("allowlist", "invite_only", "sold_out", "limited"):
        warnings.append(Note("sale_status", f"{inst.family} is {inst.sale_status.replace('_', ' ')}: ask sales / "
                             "open a ticket before you plan on it.",
                             f"{inst.family} 当前为{_STATUS_ZH[inst.sale_status]}，请先联系售前或提交工单确认资源。"))
    if inst.confidence != "official":
        warnings.append(Note("instance_unverified", f"{inst.instance_type}'s specs come from "
                             f"{confidence_label(inst.confidence, 'en')} sources; confirm them in the console.",
                             f"{inst.instance_type} 的规格来自{confidence_label(inst.confidence, 'zh')}来源，"
                             "请在控制台确认。", "info"))
    cand = Candidate(inst, gpu, s, fit.memory, t, hours, line, lines,
                     None if line is None else budget_verdict(line, w.budget_cny, w.budget_period),
                     deadline_verdict(hours, w.deadline_hours), tuple(warnings), q)
    verdict = cand.verdict()
    if verdict.status == "fits":
        return cand
    room = room_hint(job.model, s.setup, verdict.capacity_gib)
    tight = Note("memory_tight", f"Tight: {verdict.need_gib:.1f} of {verdict.capacity_gib:.1f} GiB usable per GPU "
                 f"({verdict.margin_pct:.1f} % margin)." + (f" {room.change[0].upper()}{room.change[1:]} gives "
                                                            f"room: {room.need_gib:.1f} GiB." if room else ""),
                 f"显存紧张：每卡 {verdict.need_gib:.1f} / {verdict.capacity_gib:.1f} GiB（余量 {verdict.margin_pct:.1f} %）。"
                 + (f"{room.change_zh}可腾出空间：约 {room.need_gib:.1f} GiB。" if room else ""))
    return replace(cand, warnings=(*cand.warnings, tight), room=room.as_dict() if room else None)


_STATUS_ZH = {"allowlist": "白名单售卖", "invite_only": "邀测", "sold_out": "售罄", "limited": "限量"}


COST_TIE = 0.005  # costs within 0.5 % of each other tie: the faster goes first
# A tight fit (within its estimate's expected error of the card: verdict.py tight_band, from the class's measured
# runs in docs/validation.md) is costed this much dearer when ranking by cost: it may OOM and cost a re-run on a
# bigger card
TIGHT_PREMIUM = 0.15


def ranking_cost(c: Candidate) -> float:
    """The cost the cheapest ordering compares: the total, with TIGHT_PREMIUM added to a tight fit."""
    return c.total_cny * (1 + TIGHT_PREMIUM) if c.verdict().status != "fits" else c.total_cny


def _rank(cands: list[Candidate], objective: str) -> list[Candidate]:
    """Price-on-request candidates rank normally for fastest and after every priced one otherwise."""
    if len(cands) < 2:
        return cands  # most instance types have one cluster size worth costing: nothing to order
    min_cost = min((c.total_cny for c in cands if c.priced), default=1.0) or 1.0
    min_hours = min(c.hours for c in cands) or 1e-6
    if objective == "fastest":
        return sorted(cands, key=lambda c: (not c.ok, c.hours, c.total_cny))
    if objective == "balanced":
        def score(c: Candidate) -> tuple[bool, bool, float, float]:
            if not c.priced:
                return (True, not c.ok, c.hours, 0.0)
            s = math.log(c.total_cny / min_cost + 1e-9) + math.log(c.hours / min_hours + 1e-9)
            return (False, not c.ok, s, c.total_cny)
        return sorted(cands, key=score)
    # cheapest: by cost; a run of options within COST_TIE of the run's cheapest is a tie, ordered by hours
    by_cost = sorted(cands, key=lambda c: (not c.priced, not c.ok, ranking_cost(c), c.hours))
    out: list[Candidate] = []
    group: list[Candidate] = []
    for c in by_cost:
        head = group[0] if group else None
        if head is not None and (c.ok != head.ok or c.priced != head.priced
                                 or ranking_cost(c) > ranking_cost(head) * (1 + COST_TIE)):
            out += sorted(group, key=lambda x: x.hours)
            group = []
        group.append(c)
    return _prefer_published(out + sorted(group, key=lambda x: x.hours))


ESTIMATE_TIE = 0.03  # an estimate within 3 % of a published price is a tie: its own uncertainty is wider
_PRICE_TRUST = {"official": 0, "user": 0, "third_party": 1, "estimate": 2}


def _prefer_published(ranked: list[Candidate]) -> list[Candidate]:
    """Within a run of priced, equally-ok candidates whose costs lie within ESTIMATE_TIE of the run's cheapest, a
    published price goes before an estimate (stable: the order by cost and hours is kept otherwise)."""
    out: list[Candidate] = []
    group: list[Candidate] = []
    for c in ranked:
        # the cost the ranking compared (a tight fit's premium included), so a tight fit never jumps a cheaper one
        if group and not (c.priced and group[0].priced and c.ok == group[0].ok
                          and ranking_cost(c) <= ranking_cost(group[0]) * (1 + ESTIMATE_TIE)):
            out += sorted(group, key=lambda x: _PRICE_TRUST[x.cost.price.confidence] if x.cost else 3)
            group = []
        group.append(c)
    return out + sorted(group, key=lambda x: _PRICE_TRUST[x.cost.price.confidence] if x.cost else 3)


def _sizes(job: Job, w: Workload, cat: Catalog, inst: InstanceRow, gpu: GpuSpec, fits: list[Fit], today: date,
           max_age: int, cal: dict[str, float]) -> list[Candidate] | str:
    """Each cluster size of one instance type, costed. A size no faster than a smaller one is dropped before it
    is costed; after two such sizes in a row the doubling stops (the links, not the GPUs, set the pace)."""
    out: list[Candidate] = []
    best, misses = math.inf, 0
    for fit in fits:
        t = _time(job, inst, gpu, fit, cal)
        if t.hours >= best:
            misses += 1
            if misses >= 2:
                break
            continue
        misses = 0
        cand = _candidate(job, w, cat, inst, gpu, fit, today, max_age, t)
        if isinstance(cand, str):
            return cand
        best = t.hours
        out.append(cand)
    return out or "no price in the catalog"


def _frontier(options: list[Candidate]) -> dict[str, tuple[FrontierPoint, ...]]:
    by_family: dict[str, dict[int, FrontierPoint]] = {}
    for c in options:
        pts = by_family.setdefault(f"{c.inst.cloud}:{c.inst.family}", {})
        p = FrontierPoint(c.inst.instance_type, c.strategy.nodes, c.strategy.total_gpus, c.hours,
                          c.cost.total_cny if c.cost is not None else None, c.meets_deadline, c.within_budget)
        old = pts.get(p.total_gpus)
        if old is None or (c.total_cny, p.hours) < (old.cost_cny if old.cost_cny is not None else math.inf,
                                                    old.hours):
            pts[p.total_gpus] = p
    return {k: mark_slower(list(v.values())) for k, v in sorted(by_family.items())}


def plan(w: Workload, cat: Catalog, today: date | None = None, max_price_age_days: int = 180,
         frontier: bool = True) -> PlanResult:
    """Every instance on the chosen clouds, sized (1, 2, 4 ... nodes), timed, costed and ranked by the objective:
    per instance type the cluster size the objective asks for (cheapest meeting the deadline and budget, fastest
    within the budget, or the knee for balanced). `frontier=False` costs only the smallest size that fits."""
    today = today or date.today()
    job = resolve_job(w, cat.models)
    include, exclude, filter_notes = _gpu_filter(w, cat)
    gpus = {g.id: g for g in cat.gpus}
    cands: list[Candidate] = []
    options: list[Candidate] = []
    rejected: list[tuple[str, str]] = []
    cal = calibration_factors()
    for inst in cat.instances:
        if w.clouds and inst.cloud not in w.clouds:
            continue
        if (include and inst.gpu not in include) or inst.gpu in exclude:
            rejected.append((inst.instance_type, f"{inst.gpu} excluded by your GPU filter"))
            continue
        if w.gpu_count is not None and inst.gpu_count < 1:
            continue
        gpu = gpus[inst.gpu]
        fits = choose(job, w, gpu, inst)
        if isinstance(fits, NoFit):
            rejected.append((inst.instance_type, fits.reason))
            continue
        sizes = _sizes(job, w, cat, inst, gpu, fits if frontier else fits[:1], today, max_price_age_days, cal)
        if isinstance(sizes, str):
            rejected.append((inst.instance_type, sizes))
            continue
        options += sizes
        cands.append(_rank(sizes, w.objective)[0])
    ranked = _rank(cands, w.objective)
    assumptions = (*filter_notes, *job.assumptions)
    settings_notes = _settings_notes(w, job, ranked, cat)
    hint, hint_zh = ("", "") if ranked else infeasible_hint(
        w, lambda alt: plan(alt, cat, today, max_price_age_days, frontier=False))
    return PlanResult(w, job, tuple(ranked), tuple(rejected), tuple(assumptions),
                      tuple(plan_notes(w, job, ranked, options)), hint, hint_zh, _frontier(options), tuple(options),
                      settings_notes)


def _settings_notes(w: Workload, job: Job, ranked: list[Candidate], cat: Catalog) -> tuple[tuple[str, str], ...]:
    """The framework defaults the top pick was sized with (or those of one GPU when nothing fits)."""
    gpu = ranked[0].gpu if ranked else next((g for g in cat.gpus if g.supports_bf16), cat.gpus[0])
    n = ranked[0].strategy.total_gpus if ranked else 1
    stage = ranked[0].strategy.setup.zero_stage if ranked else 0
    _, notes = settings_for(w, job.method, gpu, n, stage)
    return (framework_note(w), *((f"{en}.", f"{zh}。") for en, zh in notes))
