"""Question type `knowledge`: a fact or a how-to. Catalog facts (who sells which GPU, FP8/BF16, memory, RDMA,
billing, regions, price) are answered from the catalog in the first line ('没有。京东云目前的 GPU 实例是 …'); other
questions open with the first sentence of the passage about the frame's topic (knowledge_lead.py: never a diagram or
table fragment; a yes/no it opens with is the answer's `answer`, or it names the question it answers when that is
not nearly this one), then the cited passages, each once. A knowledge question
that names a workload and GPUs also gets that workload sized on those cards."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from service.catalog.queries import find_instance, resolve_gpu
from service.catalog.schema import LINK_NAME, SOFTWARE_STACK, GpuSpec
from service.errors import AdvisorError
from service.labels import confidence_label, per_unit, price_when, unpublished
from service.lexicon.data import lexicon
from service.planner.catalog_view import CatalogInstance, instance_row
from service.planner.questions.facts import FACTS, catalog_fact
from service.questions import feasibility, plan_text
from service.questions.base import AnswerBase, Ask, Context, Phrases, QuestionModule
from service.questions.knowledge_lead import choose, topic_terms
from service.questions.parts import Part, PassageRef
from service.questions.view import gpus_named, is_memory_class, subject_count, workload_fields
from service.retrieval.passages import passage_body

_NEEDS_GPU = ("supports_fp8", "supports_bf16", "supports_flash_attn", "nvlink", "memory", "bandwidth", "tflops", "cuda")


class FactArgs(BaseModel):
    fact: Literal[FACTS] = Field(description="sells | supports_fp8 | supports_bf16 | supports_flash_attn | nvlink | "  # type: ignore[valid-type]
                                             "memory | bandwidth | tflops | cuda | rdma | billing | regions | price | list")
    gpu: str | None = Field(default=None, description="the GPU asked about, e.g. A100, H20, 4090")
    clouds: list[Literal["tencent", "jdcloud"]] = Field(default_factory=list, description="empty: both clouds")
    family: str | None = Field(default=None, max_length=24, description="an instance family named (GT4, PNV4)")
    place: str | None = Field(default=None, max_length=24, description="a city asked about (a lexicon region code)")
    exact: bool = Field(default=False, description="the user named the variant (A100 80G): match it exactly")
    question: str | None = None
    also: str | None = None


class FactRow(Part):
    """A catalog row behind a fact: an instance (with its price when the fact is a price) or a family's regions."""

    cloud: str
    instance_type: str | None = None
    family: str | None = None
    gpu: str | None = None
    gpu_count: float | None = None
    gpu_memory_gib: float | None = None
    vcpus: int | None = None
    memory_gib: float | None = None
    rdma: bool | None = None
    network_gbps: float | None = None
    regions: str | None = None
    sale_status: str | None = None
    source: str | None = None
    price_cny: float | None = None
    unit: str | None = None
    per_gpu_hour_cny: float | None = None
    confidence: str | None = None
    as_of: str | None = None
    captured: str | None = None
    price_source: str | None = None
    content_as_of: str | None = None
    content_basis: str | None = None


class BillingRuleRow(Part):
    cloud: str
    family: str
    low: float
    high: float
    note: str = ""
    note_zh: str = ""
    source: str = ""
    confidence: str = ""


class FactAnswer(AnswerBase):
    """A fact answered from the catalog tables (service/planner/questions/facts.py)."""

    kind: Literal["fact"] = "fact"
    fact: str
    gpu: str | None = None
    gpu_family: str | None = None
    clouds: list[str] = Field(default_factory=list)
    gpu_source: str | None = None
    gpu_confidence: str | None = None
    gpu_vendor: str | None = None
    answer: str | None = None
    value: float | str | None = None
    link: str | None = None
    software_stack: str | None = None
    rows: list[FactRow] = Field(default_factory=list)
    on_request: list[FactRow] = Field(default_factory=list)
    elsewhere: list[str] = Field(default_factory=list)
    cloud_gpus: dict[str, list[str]] = Field(default_factory=dict)
    by_cloud: dict[str, bool] = Field(default_factory=dict)
    also: list[str] = Field(default_factory=list)
    rules: list[BillingRuleRow] = Field(default_factory=list)
    spot_instances: list[str] = Field(default_factory=list)
    instance_family: str | None = None
    place: str | None = None
    unlisted: list[str] = Field(default_factory=list)
    place_regions: list[str] = Field(default_factory=list)
    unknown: bool | None = None


class GpuFact(GpuSpec):
    """A GPU's catalog row with how the name resolved and the instances that carry it."""

    resolution_note: str | None = None
    sold_as: list[str] = Field(default_factory=list)


class KnowledgeArgs(BaseModel):
    query: str = Field(min_length=1, max_length=4000, description="the question, in the user's words")
    lang: Literal["zh", "en"] | None = None
    k: int = Field(default=4, ge=1, le=10)
    fact: FactArgs | None = Field(default=None, description="a catalog fact the question asks")
    applied: feasibility.FeasibilityArgs | None = Field(
        default=None, description="a workload the question names, sized on the GPU it names")
    names: list[str] = Field(default_factory=list, max_length=4, description="GPU or instance names to look up")
    asked: str | None = Field(default=None, description="what the question asks (the frame's `asked`)")
    topics: list[str] = Field(default_factory=list, max_length=12,
                              description="words naming what the question is about (its fact, billing, engine)")


class KnowledgeAnswer(AnswerBase):
    kind: Literal["knowledge"] = "knowledge"
    query: str
    passages: list[PassageRef] = Field(default_factory=list)
    fact: FactAnswer | None = None
    applied: feasibility.FeasibilityAnswer | None = None
    gpus: list[GpuFact] = Field(default_factory=list)
    instances: list[CatalogInstance] = Field(default_factory=list)
    unavailable: str | None = Field(default=None, description="why the knowledge search did not answer")
    lead: str | None = Field(default=None, description="the chosen passage's first sentence, the answer's first line")
    answer: Literal["yes", "no"] | None = Field(default=None, description="the yes or no the lead sentence opens with")
    lead_question: str | None = Field(default=None, description="the question the lead answers, when it is not "
                                                                "nearly the one asked (said before the lead)")


def run_fact(ctx: Context, args: FactArgs) -> FactAnswer:
    out = catalog_fact(ctx.catalog, args.fact, args.gpu, list(args.clouds), args.exact, args.family, args.place)
    return FactAnswer.model_validate(out if out is not None else {"kind": "fact", "fact": args.fact, "answer": None,
                                                                  "unknown": True})


def search_passages(ctx: Context, query: str, k: int, lang: str | None) -> tuple[list[PassageRef], str | None]:
    """The guide's passages for a query, or none and the reason when the search is unavailable."""
    if ctx.retriever is None:
        return [], "not configured"
    try:
        found = ctx.retriever().search(query, k=k, lang=lang)
    except AdvisorError as exc:
        return [], str(exc)
    return [PassageRef.model_validate({**p.to_dict(), "title": f"{p.title} — {p.section}"}) for p in found], None


def lookup(ctx: Context, name: str) -> GpuFact | CatalogInstance | None:
    """One GPU or instance by name, with its prices or where it is sold; None when unknown."""
    cat = ctx.catalog
    inst = find_instance(name, cat.instances)
    if inst is not None:
        return instance_row(inst, cat)
    try:
        g, note = resolve_gpu(name, cat.gpus)
    except AdvisorError:
        return None
    sold = sorted(r.instance_type for r in cat.instances if r.gpu == g.id)
    return GpuFact.model_validate({**g.model_dump(), "resolution_note": note, "sold_as": sold})


def _run(ctx: Context, args: KnowledgeArgs) -> KnowledgeAnswer:
    terms = tuple(args.topics)
    query = f"{args.query} {' '.join(terms)}" if terms else args.query  # the topic's words weigh in the search
    found, unavailable = search_passages(ctx, query, args.k + 2 if terms else args.k, args.lang)
    chosen = choose(found, terms, args.query)
    out = KnowledgeAnswer(query=args.query, passages=chosen.passages[:args.k], unavailable=unavailable,
                          lead=chosen.sentence, answer=chosen.verdict, lead_question=chosen.question)
    if args.fact is not None:
        out.fact = run_fact(ctx, args.fact)
    if args.applied is not None:
        try:
            out.applied = feasibility.MODULE.call(ctx, args.applied.model_dump(exclude_unset=True))
        except AdvisorError:
            out.applied = None
    for name in args.names:
        hit = lookup(ctx, name)
        if isinstance(hit, CatalogInstance):
            out.instances.append(hit)
        elif hit is not None:
            out.gpus.append(hit)
    return out


def fact_args(a: Ask) -> FactArgs | None:
    """The catalog fact a question asks, or None."""
    f = a.frame
    fact: str | None = f.fact
    gpus = [g for g in gpus_named(f) if not is_memory_class(g)]
    clouds = [c for c in f.constraints.clouds if c in ("tencent", "jdcloud")]
    if fact == "sells" and clouds and not gpus:
        fact = "list"  # '腾讯云有哪些卡': the GPUs a cloud rents
    if fact is None or fact not in FACTS or (fact in _NEEDS_GPU and not gpus):
        return None
    if fact == "sells" and not gpus and not clouds:
        return None
    exact = bool(gpus) and f.setup.hardware.gpu_memory_gb is not None
    return FactArgs.model_validate({"fact": fact, "gpu": gpus[0] if gpus else None, "clouds": clouds, "exact": exact,
                                    "family": f.names[0] if fact == "regions" and f.names else None,
                                    "place": f.region if fact == "regions" else None})


def _route(a: Ask) -> KnowledgeArgs:
    """A fact from the catalog when one is asked; the guide's passages; and a training job named in the question sized
    on the GPU it names (both options of 'DeepSpeed 还是 FSDP for a 30B on 16 H800'); else the GPUs and instances
    it names, looked up."""
    f = a.frame
    fact = fact_args(a)
    gpus = [g for g in gpus_named(f) if not is_memory_class(g)]
    fields = workload_fields(f)
    applied: feasibility.FeasibilityArgs | None = None
    names: list[str] = []
    # a training job it describes ('全参训 qwen2 7b 用 DeepSpeed 还是 FSDP'); a server's post gets no LoRA verdict
    training = f.task == "train" or f.setup.method is not None
    if gpus and (fields.get("model") or fields.get("params_b")) and training:
        fields.pop("gpu_include", None)
        applied = feasibility.FeasibilityArgs.model_validate(
            {**fields, "gpu": gpus[0], "gpu_count": subject_count(f) or 1, "question": "knowledge", "fp8_as_bf16": True})
    elif fact is None:
        names = [*f.names, *gpus][:2]
    return KnowledgeArgs(query=f.query or " ", k=4, lang="en" if a.lang == "en" else "zh", fact=fact,
                         applied=applied, names=names, asked=f.asked, topics=list(topic_terms(f)))


def _names(items: list[str], ph: Phrases) -> str:
    return ("、" if ph.zh else ", ").join(items) or "—"


def _clouds(fact: FactAnswer, ph: Phrases) -> str:
    asked = fact.clouds or ["tencent", "jdcloud"]
    return ("和" if ph.zh else " and ").join(ph.name("cloud_names", c) for c in asked)


def _instances(rows: list[FactRow], ph: Phrases, n: int = 6) -> str:
    return _names([f"{ph.name('cloud_names', r.cloud)} {r.instance_type}（{r.gpu_count:g} × {r.gpu}）" if ph.zh else
                   f"{ph.name('cloud_names', r.cloud)} {r.instance_type} ({r.gpu_count:g} x {r.gpu})"
                   for r in rows[:n]], ph)


_ZH_NUM = "零一二三四五六七八九十"


def zone_label(zone: str, zh: bool) -> str:
    """'Guangzhou-3' -> '广州三区' and 'cn-north-1' -> 'cn-north-1（北京）' for a Chinese reader; as is otherwise."""
    zone = zone.strip()
    if not zh:
        return zone
    for e in lexicon().regions.values():
        if zone.lower().startswith("cn-") and zone.lower() in e.names:
            return f"{zone}（{e.zh}）"
        if zone.lower().startswith(e.en.lower()):
            n = zone[len(e.en):].lstrip("-")
            return e.zh + (f"{_ZH_NUM[int(n)]}区" if n.isdigit() and int(n) <= 10 else "")
    return zone


def _sells_by_cloud(fact: FactAnswer, ph: Phrases, gpu: str) -> str:
    t = ph.group("fact")
    lines: list[str] = []
    for cloud, sells in fact.by_cloud.items():
        name = ph.name("cloud_names", cloud)
        if sells:
            rows = [r for r in fact.rows if r.cloud == cloud]
            lines.append(t.text("sells_yes" if not lines else "sells_also", cloud=name, gpu=gpu,
                                instances=_instances(rows, ph)))
        else:
            lines.append(t.text("sells_no", cloud=name, gpu=gpu, gpus=_names(fact.cloud_gpus[cloud], ph)))
    return "\n".join(lines)


def _regions(fact: FactAnswer, ph: Phrases, clouds: str) -> str:
    t = ph.group("fact")
    if not fact.rows:
        return t.text("regions_unlisted", cloud=clouds, families=_names(fact.unlisted, ph))
    listed = t.text("regions", cloud=clouds, instances=_names(
        [f"{r.family}（{'、'.join(zone_label(z, True) for z in (r.regions or '').split(';'))}）"
         if ph.zh else f"{r.family} ({(r.regions or '').replace(';', ', ')})" for r in fact.rows[:6]], ph))
    if fact.answer in ("yes", "no"):
        place = lexicon().regions[fact.place or ""]
        first = t.text(f"regions_{fact.answer}", place=place.zh if ph.zh else place.en,
                       what=fact.instance_family or fact.gpu_family or clouds,
                       zones=_names([zone_label(z, ph.zh) for z in fact.place_regions], ph))
        return f"{first}\n{listed}"
    return listed


def render_fact(fact: FactAnswer, ph: Phrases) -> str:
    """The catalog's answer in one or two lines."""
    f, t = fact.fact, ph.group("fact")
    gpu = fact.gpu_family or fact.gpu or ""
    clouds = _clouds(fact, ph)
    if f == "sells":
        if len(set(fact.by_cloud.values())) > 1:  # the clouds named differ: say each
            return _sells_by_cloud(fact, ph, gpu)
        if fact.answer == "yes":
            return t.text("sells_yes", cloud=clouds, gpu=gpu, instances=_instances(fact.rows, ph))
        lines = [t.text("sells_no", cloud=clouds, gpu=gpu, gpus=_names(
            sorted({g for gs in fact.cloud_gpus.values() for g in gs}), ph))]
        if fact.elsewhere:
            lines.append(t.text("sells_elsewhere", gpu=gpu, cloud=_names(
                [ph.name("cloud_names", c) for c in fact.elsewhere], ph)))
        return "\n".join(lines)
    if f == "list":
        return "\n".join(t.text("list", cloud=ph.name("cloud_names", c), gpus=_names(g, ph))
                         for c, g in fact.cloud_gpus.items())
    if f in ("supports_fp8", "supports_bf16", "supports_flash_attn", "nvlink"):
        return t.text(f"{f}_{fact.answer}", gpu=gpu, value=fact.value or "", also=_names(fact.also, ph))
    if f in ("memory", "bandwidth", "tflops", "cuda"):
        return t.text(f, gpu=gpu, value=fact.value)
    if f == "rdma":
        return t.text(f"rdma_{fact.answer}", cloud=clouds, instances=_instances(fact.rows, ph))
    if f == "price":
        if fact.answer == "yes":
            r = fact.rows[0]
            return t.text("price_yes", gpu=gpu or r.gpu, cloud=ph.name("cloud_names", r.cloud),
                          instance=r.instance_type, price=f"{r.price_cny:,.2f}", per=f"{r.per_gpu_hour_cny:,.2f}",
                          count=f"{r.gpu_count:g}", as_of=price_when(r, ph.lang))
        if fact.answer == "on_request":
            return t.text("price_on_request", gpu=gpu, instances=_instances(fact.on_request, ph))
        return t.text("price_no", gpu=gpu, cloud=clouds)
    if f == "billing":
        groups: dict[tuple[str, str, str], list[str]] = {}
        for rule in fact.rules:
            ratio = f"{rule.low:g}" if rule.low == rule.high else f"{rule.low:g}–{rule.high:g}"
            groups.setdefault((rule.cloud, ratio, ""), []).append(rule.family)
        rules = [t.text("billing_rule", cloud=ph.name("cloud_names", c), family=_names(fams, ph), ratio=ratio)
                 for (c, ratio, _), fams in groups.items()]
        return "\n".join([t.text("billing_first", cloud=clouds), *rules])
    return _regions(fact, ph, clouds)


def gpu_fact(g: GpuFact, ph: Phrases) -> str:
    vendor = str(g.vendor or "nvidia")
    cuda = (ph.text("cuda_min", version=g.min_cuda) if g.min_cuda
            else ph.text("cuda_none", stack=SOFTWARE_STACK.get(vendor, vendor)))
    return ph.text(
        "gpu_fact", name=g.name, memory=f"{g.memory_gib:g}",
        bf16=ph.text("supported") if g.supports_bf16 else ph.text("unsupported"),
        fp8=ph.text("supported") if g.supports_fp8 else ph.text("unsupported"), link=LINK_NAME.get(vendor, "NVLink"),
        nvlink=f"{g.nvlink_gb_s:g}", cuda=cuda, sold=", ".join(g.sold_as[:6]) or "—")


def instance_fact(i: CatalogInstance, ph: Phrases) -> str:
    lang = ph.lang
    prices = "; ".join(f"{ph.group('billing_names').text(p.billing)} ¥{p.price_cny:,.2f}{per_unit(p.unit, lang)} "
                       f"({confidence_label(p.confidence, lang)}, {p.date_zh if ph.zh else p.date_en})"
                       for p in i.prices
                       if not p.region)
    return ph.text("instance_fact", instance=i.instance_type, cloud=ph.group("cloud_names").text(i.cloud),
                   gpus=f"{i.gpu_count:g} × {i.gpu}", vcpus=i.vcpus if i.vcpus is not None else unpublished(lang),
                   ram=f"{i.memory_gib:g}" if i.memory_gib is not None else unpublished(lang), prices=prices or "—")


def _answered_fact(fact: FactAnswer | None) -> bool:
    return fact is not None and (fact.answer is not None or bool(fact.rules) or bool(fact.cloud_gpus)
                                 or bool(fact.rows) or bool(fact.unlisted))


def _render(answer: KnowledgeAnswer, ph: Phrases) -> str:
    """The catalog fact or the best passage's first sentence; a workload applied; the GPUs and instances named;
    then the passages (citations are added by the composer)."""
    passages = answer.passages
    lines: list[str] = []
    if _answered_fact(answer.fact):
        assert answer.fact is not None
        lines.append(render_fact(answer.fact, ph))
    elif answer.lead:
        lines.append(ph.text("lead_on", question=answer.lead_question, lead=answer.lead) if answer.lead_question
                     else answer.lead)
    if answer.applied is not None:
        rendered = feasibility.MODULE.render(answer.applied, ph).split("\n")
        first = rendered[1] if answer.applied.fp8_unsupported and len(rendered) > 1 else rendered[0]  # the fit
        lines += ["", ph.text("applied", line=first)]
    facts = [gpu_fact(g, ph) for g in answer.gpus]
    facts += [instance_fact(i, ph) for i in answer.instances]
    if facts:
        lines += ["", *dict.fromkeys(facts)]
    if not lines:
        if not passages:
            return ph.text("no_passage")
        lines.append(ph.text("no_lead"))  # only diagrams or tables found: say so, never a fragment as the answer
    for p in passages[:3]:
        lines += ["", f"**[{p.title or p.id}]({plan_text.knowledge_href(p.id)})**", "",
                  passage_body(p.text, p.title)[:700]]
    return "\n".join(lines)


def _summary(o: KnowledgeAnswer) -> str:
    head = f"{o.fact.fact}: {o.fact.answer or 'unknown'}; " if o.fact is not None else ""
    return head + "; ".join(f"[{p.id}] {p.title}" for p in o.passages[:4]) if (head or o.passages) else \
        f"No passage found{': ' + o.unavailable if o.unavailable else ''}."


MODULE = QuestionModule(
    name="knowledge", tool="ask_knowledge", title="Answer from the guide and the catalog", args=KnowledgeArgs,
    answer=KnowledgeAnswer, run=_run, route=_route, render=_render, summary=_summary, follows=False, workload=False,
    frames=(("none", "howto"), ("none", "fact"), ("train", "howto"), ("serve", "howto"), ("both", "howto"),
            ("none", "price")),
    description="A how-to or a fact: the guide's passages for the question (cited), the catalog's answer when a "
                "catalog fact is asked (who sells a GPU, FP8/BF16 support, memory, RDMA, billing rules, regions, "
                "prices), and a workload the question names sized on the GPU it names. Not for sizing a job: use "
                "plan or the question tools.")
