"""Question type `knowledge`: a fact or a how-to. Catalog facts (who sells which GPU, FP8/BF16, memory, RDMA,
billing, regions, price) are answered from the catalog in the first line ('没有。京东云目前的 GPU 实例是 …'); other
questions open with one sentence from the best passage, then the cited passages, each once. A knowledge question
that names a workload and GPUs also gets that workload sized on those cards."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from service.assistant.intents.base import Artifact, Ask, Phrases, QuestionType
from service.planner.questions.facts import FACTS, catalog_fact

_NEEDS_GPU = ("supports_fp8", "supports_bf16", "supports_flash_attn", "nvlink", "memory", "bandwidth", "tflops", "cuda")


class FactArgs(BaseModel):
    fact: Literal[FACTS] = Field(description="sells | supports_fp8 | supports_bf16 | supports_flash_attn | nvlink | "  # type: ignore[valid-type]
                                             "memory | bandwidth | tflops | cuda | rdma | billing | regions | price | list")
    gpu: str | None = Field(default=None, description="the GPU asked about, e.g. A100, H20, 4090")
    clouds: list[Literal["tencent", "jdcloud"]] = Field(default_factory=list, description="empty: both clouds")
    exact: bool = Field(default=False, description="the user named the variant (A100 80G): match it exactly")
    question: str | None = None
    also: str | None = None


def _run(ctx: Any, args: FactArgs) -> Artifact:
    out = catalog_fact(ctx.catalog, args.fact, args.gpu, list(args.clouds), args.exact)
    return out if out is not None else {"kind": "fact", "fact": args.fact, "answer": None, "unknown": True}


def _route(a: Ask) -> dict[str, Any] | None:
    fact = a.reading.slots.get("fact")
    gpus = a.reading.parsed.subject.gpus
    clouds = [c for c in a.reading.slots.get("clouds") or [] if c in ("tencent", "jdcloud")]
    if fact is None and (gpus or clouds) and a.reading.parsed.extra.get("fact") is None and clouds and not gpus:
        fact = "list"
    if fact is None or (fact in _NEEDS_GPU and not gpus):
        return None
    if fact == "sells" and not gpus and not clouds:
        return None
    raw = a.text.lower()
    exact = bool(gpus) and bool(re.search(r"\d+\s*g", raw))
    return {"fact": fact, "gpu": gpus[0] if gpus else None, "clouds": clouds, "exact": exact}


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


def render_fact(art: Artifact, ph: Phrases) -> str:
    """The catalog's answer in one or two lines."""
    f, t = art["fact"], ph["fact"]
    gpu = art.get("gpu_family") or art.get("gpu") or ""
    clouds = _clouds(art, ph)
    if f == "sells":
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
    return str(t["regions"]).format(cloud=clouds, instances=_names(
        [f"{r['instance_type']}: {r['regions']}" for r in art.get("rows", [])[:6]], ph))


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
