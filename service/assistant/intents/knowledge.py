"""Question type `knowledge`: a fact or a how-to. Catalog facts (who sells which GPU, FP8/BF16, memory, RDMA,
billing, regions, price) are answered from the catalog in the first line ('没有。京东云目前的 GPU 实例是 …'); other
questions open with one sentence from the best passage, then the cited passages, each once. A knowledge question
that names a workload and GPUs also gets that workload sized on those cards."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from service.assistant.intents.base import Artifact, Ask, Phrases, QuestionType
from service.lexicon.data import lexicon
from service.planner.questions.facts import FACTS, catalog_fact

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


def _run(ctx: Any, args: FactArgs) -> Artifact:
    out = catalog_fact(ctx.catalog, args.fact, args.gpu, list(args.clouds), args.exact, args.family, args.place)
    return out if out is not None else {"kind": "fact", "fact": args.fact, "answer": None, "unknown": True}


_LIST_ASKED = re.compile(r"哪些|什么(?:卡|gpu|显卡|型号|实例|机型)|有啥|(?<![A-Za-z])(?:which|what) (?:gpus|cards|instances)",
                         re.IGNORECASE)
# an instance family as the clouds write it: GT4, PNV4, HCCPNV5, GN10Xp, BMGNV4 (capitals, then a digit)
_FAMILY_NAMED = re.compile(r"(?<![A-Za-z0-9])(?:HCC|BM)?[A-Z]{2,5}\d{1,2}[a-z]{0,2}(?![A-Za-z0-9])")


def _route(a: Ask) -> dict[str, Any] | None:
    fact = a.reading.slots.get("fact")
    gpus = a.reading.parsed.subject.gpus
    clouds = [c for c in a.reading.slots.get("clouds") or [] if c in ("tencent", "jdcloud")]
    if fact is None and clouds and not gpus and _LIST_ASKED.search(a.text):
        fact = "list"  # '腾讯云有哪些卡': the GPUs a cloud rents
    if fact is None or (fact in _NEEDS_GPU and not gpus):
        return None
    if fact == "sells" and not gpus and not clouds:
        return None
    raw = a.text.lower()
    exact = bool(gpus) and bool(re.search(r"\d+\s*g", raw))
    out: dict[str, Any] = {"fact": fact, "gpu": gpus[0] if gpus else None, "clouds": clouds, "exact": exact}
    if fact == "regions":
        named = _FAMILY_NAMED.search(a.text)
        out.update({"family": named.group(0) if named else None, "place": lexicon().region_in(a.text)})
    return out


def _names(items: list[str], ph: Phrases) -> str:
    return ("、" if ph["hours_unit"] == "小时" else ", ").join(items) or "—"


def _clouds(art: Artifact, ph: Phrases) -> str:
    asked = art.get("clouds") or ["tencent", "jdcloud"]
    return ("和" if ph["hours_unit"] == "小时" else " and ").join(ph["cloud_names"].get(c, c) for c in asked)


def _instances(rows: list[Artifact], ph: Phrases, n: int = 6) -> str:
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


def _sells_by_cloud(art: Artifact, ph: Phrases, gpu: str) -> str:
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


def render_fact(art: Artifact, ph: Phrases) -> str:
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
                                              as_of=r["as_of"])
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


def passage_body(p: Artifact) -> str:
    """A passage's text without its leading title line (the answer shows the title once, as the link)."""
    text = str(p.get("text", "")).strip()
    head, _, rest = text.partition("\n")
    title = str(p.get("title") or "")
    return rest.strip() if head.strip() and (head.strip() == title.strip() or head.strip() in title) else text


def first_sentence(text: str, limit: int = 160) -> str:
    """The first sentence of a passage, without Markdown marks: the one-line answer to a how-to question."""
    body = re.sub(r"^#+\s.*$|[*_`>]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", text, flags=re.M).strip()
    body = re.sub(r"^\s*\|.*$", "", body, flags=re.M).strip()  # tables
    body = re.sub(r"^\s*(?:[-*]|\d+[.、)])\s+", "", body, flags=re.M)  # list markers: the item is the sentence
    m = re.search(r"^(.{6,}?[。！？!?]|.{6,}?\.)(?:\s|$)", body, flags=re.S)
    out = (m.group(1) if m else body.split("\n", 1)[0]).replace("\n", " ").strip()
    return out if len(out) <= limit else out[: limit - 1] + "…"


KNOWLEDGE = QuestionType(
    name="knowledge", tool="lookup_fact", args=FactArgs, run=_run,
    summary=lambda o: f"{o.get('fact')}: {o.get('answer')}", route=_route, render=render_fact,
    result=lambda o: {"fact": {k: o.get(k) for k in ("fact", "answer", "gpu", "gpu_family", "clouds", "value",
                                                     "rows", "elsewhere", "cloud_gpus", "on_request")}},
    doc="Answer a catalog fact from the catalog: who sells a GPU (sells), GPU support (supports_fp8, "
        "supports_bf16, nvlink), specs (memory, bandwidth, tflops, cuda), RDMA instances, billing rules, regions, "
        "the cheapest price, or the GPUs a cloud has (list). Use search_knowledge for how-to questions.",
    follows=False)
