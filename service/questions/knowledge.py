"""Question type `knowledge`: a fact or a how-to. Catalog facts (who sells which GPU, FP8/BF16, memory, RDMA,
billing, regions, price) are answered from the catalog in the first line ('没有。京东云目前的 GPU 实例是 …'); other
questions open with one sentence from the best passage, then the cited passages, each once. A knowledge question
that names a workload and GPUs also gets that workload sized on those cards."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from service.catalog.queries import find_instance, resolve_gpu
from service.catalog.schema import GpuSpec
from service.errors import AdvisorError
from service.labels import price_when
from service.lexicon.data import lexicon
from service.planner.catalog_view import CatalogInstance, instance_row
from service.planner.questions.facts import FACTS, catalog_fact
from service.questions import feasibility, plan_text
from service.questions.base import AnswerBase, Ask, Context, Phrases, QuestionModule
from service.questions.parts import Part, PassageRef
from service.questions.view import gpus_named, is_memory_class, subject_count, workload_fields

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


class KnowledgeAnswer(AnswerBase):
    kind: Literal["knowledge"] = "knowledge"
    query: str
    passages: list[PassageRef] = Field(default_factory=list)
    fact: FactAnswer | None = None
    applied: feasibility.FeasibilityAnswer | None = None
    gpus: list[GpuFact] = Field(default_factory=list)
    instances: list[CatalogInstance] = Field(default_factory=list)
    unavailable: str | None = Field(default=None, description="why the knowledge search did not answer")


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
    passages, unavailable = search_passages(ctx, args.query, args.k, args.lang)
    out = KnowledgeAnswer(query=args.query, passages=passages, unavailable=unavailable)
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
    """A fact from the catalog when one is asked; the guide's passages; and a workload named in the question sized
    on the GPU it names (both options of 'DeepSpeed 还是 FSDP for a 30B on 16 H800'); else the GPUs and instances
    it names, looked up."""
    f = a.frame
    fact = fact_args(a)
    gpus = [g for g in gpus_named(f) if not is_memory_class(g)]
    fields = workload_fields(f)
    applied: feasibility.FeasibilityArgs | None = None
    names: list[str] = []
    if gpus and (fields.get("model") or fields.get("params_b")):
        fields.pop("gpu_include", None)
        applied = feasibility.FeasibilityArgs.model_validate(
            {**fields, "gpu": gpus[0], "gpu_count": subject_count(f) or 1, "question": "knowledge"})
    elif fact is None:
        names = [*f.names, *gpus][:2]
    return KnowledgeArgs(query=f.query or " ", k=4, lang="en" if a.lang == "en" else "zh", fact=fact,
                         applied=applied, names=names, asked=f.asked)


def _names(items: list[str], ph: Phrases) -> str:
    return ("、" if ph["hours_unit"] == "小时" else ", ").join(items) or "—"


def _clouds(art: dict[str, Any], ph: Phrases) -> str:
    asked = art.get("clouds") or ["tencent", "jdcloud"]
    return ("和" if ph["hours_unit"] == "小时" else " and ").join(ph["cloud_names"].get(c, c) for c in asked)


def _instances(rows: list[dict[str, Any]], ph: Phrases, n: int = 6) -> str:
    return _names([f"{ph['cloud_names'].get(r['cloud'], r['cloud'])} {r['instance_type']}（{r['gpu_count']:g} × "
                   f"{r['gpu']}）" if ph["hours_unit"] == "小时" else
                   f"{ph['cloud_names'].get(r['cloud'], r['cloud'])} {r['instance_type']} ({r['gpu_count']:g} x "
                   f"{r['gpu']})" for r in rows[:n]], ph)


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


def _sells_by_cloud(art: dict[str, Any], ph: Phrases, gpu: str) -> str:
    t, names = ph["fact"], ph["cloud_names"]
    lines: list[str] = []
    for cloud, sells in art["by_cloud"].items():
        name = names.get(cloud, cloud)
        if sells:
            rows = [r for r in art["rows"] if r["cloud"] == cloud]
            lines.append(str(t["sells_yes" if not lines else "sells_also"]).format(
                cloud=name, gpu=gpu, instances=_instances(rows, ph)))
        else:
            lines.append(str(t["sells_no"]).format(cloud=name, gpu=gpu, gpus=_names(art["cloud_gpus"][cloud], ph)))
    return "\n".join(lines)


def render_fact(art: dict[str, Any], ph: Phrases) -> str:
    """The catalog's answer in one or two lines."""
    f, t = art["fact"], ph["fact"]
    gpu = art.get("gpu_family") or art.get("gpu") or ""
    clouds = _clouds(art, ph)
    if f == "sells":
        by_cloud = art.get("by_cloud") or {}
        if len(set(by_cloud.values())) > 1:  # the clouds named differ: say each
            return _sells_by_cloud(art, ph, gpu)
        if art["answer"] == "yes":
            return str(t["sells_yes"]).format(cloud=clouds, gpu=gpu, instances=_instances(art["rows"], ph))
        lines = [str(t["sells_no"]).format(cloud=clouds, gpu=gpu, gpus=_names(
            sorted({g for gs in art["cloud_gpus"].values() for g in gs}), ph))]
        if art.get("elsewhere"):
            lines.append(str(t["sells_elsewhere"]).format(gpu=gpu, cloud=_names(
                [ph["cloud_names"].get(c, c) for c in art["elsewhere"]], ph)))
        return "\n".join(lines)
    if f == "list":
        return "\n".join(str(t["list"]).format(cloud=ph["cloud_names"].get(c, c), gpus=_names(g, ph))
                         for c, g in art["cloud_gpus"].items())
    if f in ("supports_fp8", "supports_bf16", "supports_flash_attn", "nvlink"):
        key = f"{f}_{art['answer']}"
        return str(t[key]).format(gpu=gpu, value=art.get("value") or "", also=_names(art.get("also") or [], ph))
    if f in ("memory", "bandwidth", "tflops", "cuda"):
        return str(t[f]).format(gpu=gpu, value=art["value"])
    if f == "rdma":
        return str(t[f"rdma_{art['answer']}"]).format(cloud=clouds, instances=_instances(art["rows"], ph))
    if f == "price":
        if art["answer"] == "yes":
            r = art["rows"][0]
            return str(t["price_yes"]).format(gpu=gpu or r["gpu"], cloud=ph["cloud_names"].get(r["cloud"], r["cloud"]),
                                              instance=r["instance_type"], price=f"{r['price_cny']:,.2f}",
                                              per=f"{r['per_gpu_hour_cny']:,.2f}", count=f"{r['gpu_count']:g}",
                                              as_of=price_when(r, "zh" if ph["hours_unit"] == "小时" else "en"))
        if art["answer"] == "on_request":
            return str(t["price_on_request"]).format(gpu=gpu, instances=_instances(art["on_request"], ph))
        return str(t["price_no"]).format(gpu=gpu, cloud=clouds)
    if f == "billing":
        groups: dict[tuple[str, str, str], list[str]] = {}
        for r in art["rules"]:
            ratio = f"{r['low']:g}" if r["low"] == r["high"] else f"{r['low']:g}–{r['high']:g}"
            groups.setdefault((r["cloud"], ratio, ""), []).append(r["family"])
        rules = [str(t["billing_rule"]).format(cloud=ph["cloud_names"].get(c, c), family=_names(fams, ph), ratio=ratio)
                 for (c, ratio, _), fams in groups.items()]
        return "\n".join([str(t["billing_first"]).format(cloud=clouds), *rules])
    if not art.get("rows"):
        return str(t["regions_unlisted"]).format(cloud=clouds, families=_names(art.get("unlisted") or [], ph))
    listed = str(t["regions"]).format(cloud=clouds, instances=_names(
        [f"{r['family']}（{'、'.join(zone_label(z, True) for z in r['regions'].split(';'))}）"
         if ph["hours_unit"] == "小时" else f"{r['family']} ({r['regions'].replace(';', ', ')})"
         for r in art.get("rows", [])[:6]], ph))
    if art.get("answer") in ("yes", "no"):
        place = lexicon().regions[art["place"]]
        first = str(t[f"regions_{art['answer']}"]).format(
            place=place.zh if ph["hours_unit"] == "小时" else place.en,
            what=art.get("instance_family") or art.get("gpu_family") or clouds,
            zones=_names([zone_label(z, ph["hours_unit"] == "小时") for z in art.get("place_regions") or []], ph))
        return f"{first}\n{listed}"
    return listed


def passage_body(p: dict[str, Any]) -> str:
    """A passage's text without its leading title line (the answer shows the title once, as the link)."""
    text = str(p.get("text", "")).strip()
    head, _, rest = text.partition("\n")
    title = str(p.get("title") or "")
    return rest.strip() if head.strip() and (head.strip() == title.strip() or head.strip() in title) else text


def first_sentence(text: str, limit: int = 160) -> str:
    """The first sentence of a passage, without Markdown marks: the one-line answer to a how-to question."""
    body = re.sub(r"^#+\s.*$|[*`>]|(?<!\w)_|_(?!\w)|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", text,
                  flags=re.M).strip()  # emphasis marks go, an identifier's underscores (o_proj) stay
    body = re.sub(r"^\s*\|.*$", "", body, flags=re.M).strip()  # tables
    body = re.sub(r"^\s*(?:[-*]|\d+[.、)])\s+", "", body, flags=re.M)  # list markers: the item is the sentence
    m = re.search(r"^(.{6,}?[。！？!?]|.{6,}?\.)(?:\s|$)", body, flags=re.S)
    out = (m.group(1) if m else body.split("\n", 1)[0]).replace("\n", " ").strip()
    out = out if len(out) <= limit else out[: limit - 1] + "…"
    return out + "”" * (out.count("“") > out.count("”"))  # a quote the sentence ends inside is closed



def _answered_fact(fact: FactAnswer | None) -> bool:
    return fact is not None and (fact.answer is not None or bool(fact.rules) or bool(fact.cloud_gpus)
                                 or bool(fact.rows) or bool(fact.unlisted))


def _render(answer: KnowledgeAnswer, ph: Phrases) -> str:
    """The catalog fact or the best passage's first sentence; a workload applied; the GPUs and instances named;
    then the passages (citations are added by the composer)."""
    passages = [p.model_dump(mode="json") for p in answer.passages]
    lines: list[str] = []
    if _answered_fact(answer.fact):
        assert answer.fact is not None
        lines.append(render_fact(answer.fact.public(), ph))
    elif passages:
        lines.append(first_sentence(passage_body(passages[0])))
    if answer.applied is not None:
        first = feasibility.MODULE.render(answer.applied, ph).split("\n", 1)[0]
        lines += ["", str(ph["applied"]).format(line=first)]
    facts = [plan_text.gpu_fact(g.model_dump(mode="json"), ph) for g in answer.gpus]
    facts += [plan_text.instance_fact(i.model_dump(mode="json"), ph) for i in answer.instances]
    if facts:
        lines += ["", *dict.fromkeys(facts)]
    if not lines:
        return str(ph["no_passage"])
    for p in passages[:3]:
        lines += ["", f"**[{p.get('title') or p['id']}]({plan_text.knowledge_href(str(p['id']))})**", "",
                  passage_body(p)[:700]]
    return "\n".join(lines)


def _summary(o: KnowledgeAnswer) -> str:
    head = f"{o.fact.fact}: {o.fact.answer}; " if o.fact is not None else ""
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
