"""Answers written from tool artifacts with the phrases in prompts/answer.<lang>.yaml. Every figure in the
text is copied from an artifact (the plan, a passage, a catalog row); nothing is computed here but formatting."""

from __future__ import annotations

from typing import Any

from service.catalog.schema import LINK_NAME, SOFTWARE_STACK
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
from service.questions.pick_why import other_cloud_lines

Artifact = dict[str, Any]


def _n(x: float, digits: int = 1) -> str:
    return f"{x:,.{digits}f}"


def _money(x: float | None, ph: Artifact) -> str:
    """A cost, or the 'price on request' phrase where the plan has no public price for the option."""
    return ph["billing_names"].get("on_request", "price on request") if x is None else f"¥{_n(x, 0)}"


def _tokens(x: float) -> str:
    for unit, div in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if x >= div:
            return f"{x / div:.3g}{unit}"
    return f"{x:.0f}"


def _lang(ph: Artifact) -> str:
    return "zh" if ph["hours_unit"] == "小时" else "en"


def _price(p: Artifact, ph: Artifact) -> str:
    return f"¥{p['price_cny']:,.2f}{per_unit(p['unit'], _lang(ph))}"


def _label(c: Artifact, ph: Artifact) -> str:
    zh = ph["hours_unit"] == "小时"
    return str(c["strategy"].get("label_zh") if zh else c["strategy"]["label"]) or str(c["strategy"]["label"])


def _pick_rows(plan: Artifact, ph: Artifact) -> list[str]:
    by_type = {c["instance_type"]: c for c in plan["candidates"]}
    rows = [ph["pick_header"], "|" + "---|" * 9]
    for cloud, itype in plan["picks"].items():
        c = by_type[itype]
        nodes = f" × {c['nodes']}" if c["nodes"] > 1 else ""
        rows.append(
            f"| {ph['cloud_names'][cloud]} | {itype}{nodes} | {c['gpu_count']:g} × {c['gpu_name']} | "
            f"{host_text(c['vcpus'], c['memory_gib'], _lang(ph))} | {_label(c, ph)} | "
            f"{c['memory_per_gpu_gib']} / {c['gpu_memory_gib']:g} GiB | {_n(c['training_hours'])} {ph['hours_unit']} | "
            f"{ph['billing_names'].get(c['billing'], c['billing'])} | {_money(c['total_cost_cny'], ph)} |")
    return rows


def error_band(pct: float | None, rows: int | None, ph: Artifact) -> str:
    """'（估算误差约 ±13.7 %，依据同类实测 35 条）': the figure's expected error, from the measured runs of its
    class (service/sizing/error_table.py); empty when no class holds enough runs."""
    if pct is None or not rows:
        return ""
    return str(ph["expected_error"]).format(pct=round(pct), rows=rows)


def _memory(c: Artifact, ph: Artifact) -> list[str]:
    m = c["memory"]
    usable = round(c["gpu_memory_gib"] * 0.92, 1)
    return [ph["memory_title"].format(instance=c["instance_type"]), ph["memory_line"].format(
        weights=m["weights_gib"], gradients=m["gradients_gib"], optimizer=m["optimizer_gib"],
        activations=m["activations_gib"], overhead=m["overhead_gib"], total=m["per_gpu_gib"],
        available=f"{c['gpu_memory_gib']:g}", usable=usable, verdict=ph["fits"])
        + error_band(m.get("expected_error_pct"), m.get("expected_error_rows"), ph)]


def _time(c: Artifact, ph: Artifact) -> list[str]:
    slow = c.get("slowdown", 1.0)
    slowdown = f" (× {slow:g} offload)" if slow and slow > 1 else ""
    line = ph["time_line"].format(
        tokens=_tokens(c["work_units"]), flops_per_token=_n(c["flops_per_token"] / 1e9, 2),
        gpus=c["total_gpus"], peak=f"{c['peak_tflops']:g}", mfu=c["mfu"], scaling=c["scaling_efficiency"],
        hours=_n(c["training_hours"]), slowdown=slowdown)
    line += error_band(c.get("throughput_expected_error_pct"), c.get("throughput_expected_error_rows"), ph)
    return [ph["time_title"], line, ph["mfu_source"].format(source=mfu_basis(c["mfu_source"], _lang(ph)))]


def _cost(c: Artifact, ph: Artifact) -> list[str]:
    out = [ph["cost_title"]]
    lines: dict[str, Artifact] = c["cost_cny"]
    for billing, line in lines.items():
        p = line["price"]
        fields = {"billing": ph["billing_names"][billing], "price": _price(p, ph),
                  "source": public_source(p["source"], p["confidence"], _lang(ph)), "as_of": price_when(p, _lang(ph)),
                  "confidence": confidence_label(p["confidence"], _lang(ph))}
        # compared with the mode the plan chose (or on-demand when it chose monthly): what the reader would pay
        cheaper = lines.get(c["billing"] if c["billing"] != "monthly" else "on_demand")
        if billing == "monthly" and cheaper is not None and cheaper["total_cny"] < line["total_cny"]:
            # a job of hours on a monthly subscription: say it does not pay, not a month's price as "this job"
            out.append(ph["cost_line_monthly_not_worth"].format(
                **fields, hours=_n(c["training_hours"]), other=ph["billing_names"][cheaper["billing"]],
                other_total=_n(cheaper["total_cny"], 0)))
            continue
        out.append(ph["cost_line"].format(**fields, total=_n(line["total_cny"], 0), monthly=_n(line["monthly_cny"], 0)))
    out.append(ph["quote"].format(link=c["quote_link"]))
    return out


def _verdicts(plan: Artifact, c: Artifact, ph: Artifact) -> list[str]:
    w = plan["workload"]
    out = []
    if w.get("budget_cny") is None:
        out.append(ph["budget_none"])
    else:
        budget = ph["period_names"][w["budget_period"]].format(budget=_n(w["budget_cny"], 0))
        spend_key = "monthly_cost_cny" if w["budget_period"] == "month" else "total_cost_cny"
        if c.get(spend_key) is not None:
            key = "budget_ok" if c["within_budget"] else "budget_no"
            out.append(ph[key].format(budget=budget, instance=c["instance_type"], spend=_money(c[spend_key], ph)))
    if w.get("deadline_hours") is not None:
        key = "deadline_ok" if c["meets_deadline"] else "deadline_no"
        out.append(ph[key].format(hours=_n(c["training_hours"]), deadline=f"{w['deadline_hours']:g}"))
    return out


def _alternatives(plan: Artifact, ph: Artifact, lang: str) -> list[str]:
    by_type = {c["instance_type"]: c for c in plan["candidates"]}
    out = [ph["alt_title"]]
    for kind in ("cheaper", "faster"):
        itype = plan["alternatives"].get(kind)
        if itype:
            c = by_type[itype]
            out.append(ph[f"alt_{kind}"].format(instance=itype, gpus=f"{c['gpu_count']:g} × {c['gpu']}",
                                                hours=_n(c["training_hours"]),
                                                cost=_money(c["total_cost_cny"], ph)))
    why = (plan.get("pick_reasons") or {}).get(plan["candidates"][0]["cloud"])
    if why and why["instance_type"] == plan["candidates"][0]["instance_type"]:
        out.append(ph["alt_why"].format(instance=why["instance_type"],
                                        reason=_msg(why, lang)))
    w = plan["workload"]
    for key, given, ref in (("alt_fastest_budget", w.get("budget_cny"), plan.get("fastest_within_budget")),
                            ("alt_cheapest_deadline", w.get("deadline_hours"), plan.get("cheapest_within_deadline"))):
        if given is not None and ref:  # the frontier's answer: any cluster size, any family
            out.append(ph[key].format(instance=ref["instance_type"], nodes=ref["nodes"],
                                      gpus=f"{ref['total_gpus']} × {ref['gpu']}", hours=_n(ref["hours"]),
                                      cost=_money(ref["cost_cny"], ph)))
    if len(out) == 1:
        out.append(ph["alt_none"])
    return out


def _host(c: Artifact, ph: Artifact) -> list[str]:
    h = c.get("host")
    if not h:
        return []
    ok = h["vcpu_ok"] and h["ram_ok"]
    gone = unpublished(_lang(ph))  # a family known only from sightings: its host is not published
    out = [str(ph["host_line"]).format(instance=c["instance_type"], vcpus=gone if c["vcpus"] is None else c["vcpus"],
                                       ram=gone if c["memory_gib"] is None else f"{c['memory_gib']:g}",
                                       vpg=gone if h["vcpu_per_gpu"] is None else f"{h['vcpu_per_gpu']:g}",
                                       need=h["ram_recommended_gib"],
                                       verdict=gone if None in (h["vcpu_ok"], h["ram_ok"]) else
                                       ph["host_ok"] if ok else ph["host_low"])]
    if h["nodes"] > 1:
        key = "net_multi_rdma" if h["rdma"] else "net_multi_tcp"
        out.append(str(ph[key]).format(nodes=h["nodes"], link=h["interconnect"]))
    elif c["gpu_count"] <= 1:
        out.append(str(ph["net_one_gpu"]))
    else:
        out.append(str(ph["net_single"]).format(link=h["interconnect"]))
    return out


def _msg(note: Artifact, lang: str) -> str:
    return str(note["message_zh"] if lang == "zh" else note["message"])


def render_plan(plan: Artifact, lang: str, ph: Artifact, citations: list[Artifact]) -> str:
    if plan.get("infeasible") or not plan["candidates"]:
        reason = (plan.get("infeasible_zh") if lang == "zh" else None) or plan.get("infeasible") or ""
        return str(ph["infeasible"].format(reason=reason))
    job, model = plan["job"], plan["model"]
    top = plan["candidates"][0]
    if model.get("kind") in ("cnn", "diffusion", "vision_transformer"):
        title = ph["title_images"].format(model=model["name"], method=ph["method_names"][job["method"]],
                                          samples=_tokens(job["samples_per_epoch"] * job["epochs"]),
                                          epochs=f"{job['epochs']:g}")
    else:
        title = ph["title"].format(model=model["name"], method=ph["method_names"][job["method"]],
                                   tokens=_tokens(job["tokens_total"]), epochs=f"{job['epochs']:g}")
    lines = [title, ""]
    lines += _pick_rows(plan, ph) + [""] + other_cloud_lines(plan, ph, lang) + _verdicts(plan, top, ph) + [""]
    lines += _memory(top, ph) + [""] + _time(top, ph) + [""] + _cost(top, ph) + [""]
    lines += _alternatives(plan, ph, lang) + [""]
    codes: dict[str, Artifact] = {}
    for n in top["warnings"]:
        codes.setdefault(n["code"], n)
    warn = [f"- ⚠️ {_msg(n, lang)}" for n in codes.values()]
    if warn:
        lines += [ph["warn_title"], *warn, ""]
    lines += [ph["advice_title"], *_host(top, ph), *[f"- {_msg(n, lang)}" for n in plan["notes"]], ""]
    assumptions = plan.get("assumptions_zh") if lang == "zh" else None
    assumptions = assumptions or plan["assumptions"]
    if assumptions:
        lines += [ph["assume_title"], *[f"- {a}" for a in assumptions], ""]
    lines += render_citations(citations, ph) + [ph["offer"]]
    return autolink("\n".join(lines).strip())


def render_citations(citations: list[Artifact], ph: Artifact) -> list[str]:
    if not citations:
        return []
    out = [ph["cite_title"]]
    out += [f"- [{c.get('title') or c['id']}]({knowledge_href(str(c['id']))})" for c in citations]
    return out + [""]


def knowledge_href(chunk_id: str) -> str:
    """Where the page (and any Markdown reader of the API) opens a cited section: /knowledge/<file>#<anchor>."""
    source, _, anchor = chunk_id.partition("#")
    path = source.removeprefix("knowledge/")
    return f"/knowledge/{path}" + (f"#{anchor}" if anchor else "")


def render_knowledge(passages: list[Artifact], facts: list[str], ph: Artifact) -> str:
    if not passages and not facts:
        return str(ph["no_passage"])
    lines = [ph["no_workload"], "", *facts]
    for p in passages[:3]:
        text = str(p["text"]).strip()
        lines += ["", f"**[{p.get('title') or p['id']}]({knowledge_href(str(p['id']))})**", "", text[:900]]
    lines += [""] + render_citations(passages, ph)
    return "\n".join(lines).strip()


def gpu_fact(g: Artifact, ph: Artifact) -> str:
    vendor = str(g.get("vendor") or "nvidia")
    cuda = (str(ph["cuda_min"]).format(version=g["min_cuda"]) if g.get("min_cuda")
            else str(ph["cuda_none"]).format(stack=SOFTWARE_STACK.get(vendor, vendor)))
    return str(ph["gpu_fact"]).format(
        name=g["name"], memory=f"{g['memory_gib']:g}", bf16=ph["supported"] if g["supports_bf16"] else ph["unsupported"],
        fp8=ph["supported"] if g["supports_fp8"] else ph["unsupported"], link=LINK_NAME.get(vendor, "NVLink"),
        nvlink=f"{g['nvlink_gb_s']:g}", cuda=cuda, sold=", ".join(g["sold_as"][:6]) or "—")


def instance_fact(i: Artifact, ph: Artifact) -> str:
    lang = _lang(ph)
    prices = "; ".join(f"{ph['billing_names'][p['billing']]} ¥{p['price_cny']:,.2f}{per_unit(p['unit'], lang)} "
                       f"({confidence_label(p['confidence'], lang)}, {price_when(p, lang)})"
                       for p in i["prices"]
                       if not p["region"])
    return str(ph["instance_fact"]).format(instance=i["instance_type"], cloud=ph["cloud_names"][i["cloud"]],
                                      gpus=f"{i['gpu_count']:g} × {i['gpu']}",
                                      vcpus=i["vcpus"] if i["vcpus"] is not None else unpublished(lang),
                                      ram=f"{i['memory_gib']:g}" if i["memory_gib"] is not None else unpublished(lang),
                                      prices=prices or "—")


def render_scope(ph: Artifact, other_clouds: list[str], lang: str) -> str:
    """An out-of-scope question: what the product answers instead; a cloud it does not cover is named as such."""
    from service.lexicon import label

    lines = [str(ph["scope"])]
    if other_clouds:
        names = ("、" if lang == "zh" else ", ").join(label("clouds", c, lang) for c in other_clouds)
        lines.append(str(ph["scope_cloud"]).format(clouds=names))
    return "\n\n".join(lines)
