"""Answers to the question types, written from their artifacts with the phrases in prompts/answer.<lang>.yaml.
The first line is the direct answer ('不能。' / 'Yes.' / the count / the winner / the saving), then the
arithmetic, then the alternatives. Nothing is computed here but formatting."""

from __future__ import annotations

from typing import Any

from service.frame import Frame
from service.planner.costing import QUOTE_LINKS
from service.questions.plan_text import error_band

Artifact = dict[str, Any]


def _n(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{x:,.{digits}f}"


def method_name(art: Artifact, ph: Artifact) -> str:
    return _method(art, ph)


def memory_line(art: Artifact, ph: Artifact) -> str:
    return _memory_line(art, ph)


def _method(art: Artifact, ph: Artifact) -> str:
    return str(ph["method_names"].get(art["strategy"]["method"], art["strategy"]["method"]))


def _zh(ph: Artifact) -> bool:
    return bool(ph["hours_unit"] == "小时")


def _strategy(art: Artifact, ph: Artifact) -> str:
    s = art["strategy"]
    bits = f" {s['quant_bits']}-bit" if s.get("quant_bits") else ""
    parts = [f"{ph['method_names'].get(s['method'], s['method'])}{bits}", f"ZeRO-{s['zero_stage']}",
             str(s["precision"]).replace("_", " ").upper()]
    if art.get("model", {}).get("kind") in ("decoder", "encoder"):
        parts.append(str(ph["seq_part"]).format(seq=s["seq_len"]))
    return ("，" if _zh(ph) else ", ").join(parts)


def _memory_line(art: Artifact, ph: Artifact) -> str:
    m = art["memory"]
    line = str(ph["feas_memory"]).format(
        weights=m["weights_gib"], gradients=m["gradients_gib"], optimizer=m["optimizer_gib"],
        activations=m["activations_gib"], overhead=m["overhead_gib"], total=m["per_gpu_gib"], strategy=_strategy(art, ph))
    band = error_band(m.get("expected_error_pct"), m.get("expected_error_rows"), ph)
    return line[:-1] + band + line[-1] if band and line[-1] in "。." else line + band


def _rent(art: Artifact, ph: Artifact, pick: Artifact | None) -> list[str]:
    out = [str(ph["rent_title"])]
    by_cloud: dict[str, list[str]] = {}
    for r in art.get("rent", []):
        by_cloud.setdefault(r["cloud"], []).append(f"{r['instance_type']} ({r['gpu_count']:g})")
    for cloud, names in by_cloud.items():
        out.append(str(ph["rent_line"]).format(cloud=ph["cloud_names"].get(cloud, cloud), instances=", ".join(names)))
    if not by_cloud:
        vendor = str(art.get("vendor") or "nvidia")
        why = (ph["rent_why_vendor"].get(vendor, ph["rent_why_other"]) if vendor != "nvidia"
               else ph["rent_why_consumer"] if art.get("form_factor") == "consumer" else ph["rent_why_other"])
        out.append(str(ph["rent_none"]).format(gpu=art["gpu_name"], why=why))
    if pick is not None and pick.get("priced"):
        out.append(str(ph["rent_pick"]).format(
            cloud=ph["cloud_names"].get(pick["cloud"], pick["cloud"]), instance=pick["instance_type"],
            gpus=f"{pick['gpu_count']:g} × {pick['gpu']}", hours=_n(pick["hours"]), cost=_n(pick["cost_cny"], 0),
            strategy=(pick.get("strategy_zh") if _zh(ph) else None) or pick.get("strategy", "")))
    return out


def render_feasibility(art: Artifact, ph: Artifact, pick: Artifact | None = None) -> str:
    key = "feas_tight" if art.get("verdict") == "tight" else "feas_yes" if art["fits"] else "feas_no"
    lines = [str(ph[key]).format(count=art["gpu_count"], gpu=art["gpu_name"], memory=f"{art['gpu_memory_gib']:g}",
                                 model=art["model"]["name"], method=_method(art, ph), need=art["per_gpu_gib"],
                                 usable=art["usable_gib"]),
             _memory_line(art, ph)]
    if art["fits"]:
        lines.append(str(ph["feas_time"]).format(count=art["gpu_count"], gpu=art["gpu_name"],
                                                 hours=_n(art["training_hours"])))
    else:
        if art["gpus_needed"] is not None:
            lines.append(str(ph["feas_needed"]).format(n=art["gpus_needed"], need=art["needed_per_gpu_gib"]))
        else:
            lines.append(str(ph["feas_needed_none"]))
        lines += ["", str(ph["feas_fix_title"])]
        for fix in art["fits_with"]:
            change = str(ph["feas_changes"][fix["change"]]).format(seq=fix["seq_len"], count=fix["gpu_count"])
            lines.append(str(ph["feas_fix_line"]).format(change=change, need=fix["per_gpu_gib"],
                                                         count=fix["gpu_count"], hours=_n(fix["training_hours"])))
        if not art["fits_with"]:
            lines.append(str(ph["feas_fix_none"]))
    lines += ["", *_rent(art, ph, pick)]
    return "\n".join(lines + _assumptions(art, ph))


def _assumptions(art: Artifact, ph: Artifact) -> list[str]:
    items = (art.get("assumptions_zh") if _zh(ph) else None) or art.get("assumptions") or []
    return ["", str(ph["assume_title"]), *[f"- {a}" for a in items]] if items else []


def _other_methods(art: Artifact, ph: Artifact) -> list[str]:
    """'没说训练方法，上面按 LoRA 算；全参微调要 …': the count for each other method, when none was named."""
    rows = art.get("other_methods") or []
    if not rows:
        return []
    items = [str(ph["min_other_item"]).format(
        method=ph["method_names"].get(r["method"], r["method"]),
        n=str(ph["min_ref_count"]).format(n=r["gpus_needed"], need=r["per_gpu_gib"])
        if r["gpus_needed"] is not None else str(ph["min_ref_none"])) for r in rows]
    return ["", str(ph["min_other_methods"]).format(method=_method(art, ph), gpu=rows[0]["gpu_name"],
                                                    items=str(ph["list_sep"]).join(items))]


def render_min_gpus(art: Artifact, ph: Artifact) -> str:
    model, method = art["model"]["name"], _method(art, ph)
    if art["gpu"] is None:
        ref = next((o for o in art.get("options", []) if o["gpu"] == "A100-80G-SXM" and o.get("gpus_needed")), None)
        first = (str(ph["min_memory_multi"]).format(n=ref["gpus_needed"], gpu=ref["gpu_name"], per=ref["per_gpu_gib"],
                                                    model=model, method=method, need=art["single_gpu_gib"])
                 if ref is not None and ref["gpus_needed"] > 1 and art["min_memory_gib"] > 141 else
                 str(ph["min_memory"]).format(min_memory=art["min_memory_gib"], model=model, method=method,
                                              need=art["single_gpu_gib"]))
        lines = [first, _memory_line(art, ph), "", str(ph["min_ref_title"])]
        for o in art["options"]:
            n = (str(ph["min_ref_count"]).format(n=o["gpus_needed"], need=o["per_gpu_gib"])
                 if o["gpus_needed"] is not None else str(ph["min_ref_none"]))
            lines.append(str(ph["min_ref_line"]).format(gpu=o["gpu_name"], memory=f"{o['gpu_memory_gib']:g}", n=n))
        return "\n".join(lines + _other_methods(art, ph) + _assumptions(art, ph))
    if art["gpus_needed"] is None:
        lines = [str(ph["min_none"]).format(gpu=art["gpu_name"], model=model, method=method, one=art["single_gpu_gib"])]
    else:
        key = "min_one" if art["gpus_needed"] == 1 else "min_yes"
        lines = [str(ph[key]).format(n=art["gpus_needed"], gpu=art["gpu_name"], model=model, method=method,
                                           zero=art["strategy"]["zero_stage"], need=art["per_gpu_gib"],
                                           usable=art["usable_gib"], one=art["single_gpu_gib"]),
                 _memory_line(art, ph)]
    lines += ["", *_rent(art, ph, None)]
    return "\n".join(lines + _other_methods(art, ph) + _assumptions(art, ph))


def option_name(kind: str, option: str, ph: Artifact) -> str:
    names = {"cloud": ph["cloud_names"], "method": ph["method_names"], "billing": ph["billing_names"]}.get(kind, {})
    return str(names.get(option, option))


def _config(r: Artifact, ph: Artifact) -> str:
    if r["gpu"] is None:
        return str(ph["cmp_no_fit"])
    where = f"{ph['cloud_names'].get(r['cloud'], r['cloud'])} {r['instance_type']}, " if r["instance_type"] else ""
    return f"{where}{r['gpu_count']:g} × {r['gpu']}"


def render_compare(art: Artifact, ph: Artifact) -> str:
    kind, rows = art["compare_kind"], art["comparison"]
    by_opt = {r["option"]: r for r in rows}
    lines: list[str] = []
    if art.get("cost_unknown"):
        lines.append(str(ph["cmp_cost_unknown"]).format(options=", ".join(option_name(kind, o, ph)
                                                                            for o in art["unpriced"])))
    if art["winner"] is None:
        lines.append(str(ph["cmp_none"]))
    elif art["by"] == "card_hours":
        w = by_opt[art["winner"]]
        others = [r for r in rows if r["option"] != art["winner"] and r.get("card_hours")]
        o = min(others, key=lambda r: r["card_hours"]) if others else w
        lines.append(str(ph["cmp_card"]).format(winner=option_name(kind, art["winner"], ph), wh=_n(w["card_hours"]),
                                                other=option_name(kind, o["option"], ph), oh=_n(o["card_hours"]),
                                                ratio=f"{o['card_hours'] / w['card_hours']:.1f}"))
    else:
        w = by_opt[art["winner"]]
        line_key = "cmp_line" if w["priced"] else "cmp_line_unpriced"
        line = str(ph[line_key]).format(config=_config(w, ph), hours=_n(w["hours"]), cost=_n(w["cost_cny"], 0))
        lines.append(str(ph["cmp_cost" if art["by"] == "cost" else "cmp_hours"]).format(
            winner=option_name(kind, art["winner"], ph), line=line))
    lines += ["", str(ph["cmp_header"]), "|---|---|---|---|---|"]
    for r in rows:
        mem = f"{r['per_gpu_gib']} / {r['gpu_memory_gib']:g} GiB" if r.get("per_gpu_gib") is not None else "—"
        cost = f"¥{_n(r['cost_cny'], 0)}" if r["priced"] else str(ph["cmp_no_price" if r["fits"] else "cmp_no_fit"])
        hours = f"{_n(r['hours'])} {ph['hours_unit']}" if r["hours"] is not None else "—"
        lines.append(str(ph["cmp_row"]).format(option=option_name(kind, r["option"], ph), config=_config(r, ph),
                                               memory=mem, hours=hours, cost=cost))
    if art["unpriced"] and not art.get("cost_unknown"):
        lines += ["", str(ph["cmp_unpriced"]).format(options=", ".join(option_name(kind, o, ph)
                                                                         for o in art["unpriced"]))]
    quoted = [r for r in rows if r["fits"] and not r["priced"] and r.get("instance_type") and r.get("cloud")]
    lines += [""] * bool(quoted) + [str(ph["cmp_quote"]).format(  # rented, priced on request: where to ask
        cloud=ph["cloud_names"].get(r["cloud"], r["cloud"]), instance=r["instance_type"],
        link=QUOTE_LINKS.get(str(r["cloud"]), "")) for r in quoted]
    return "\n".join(lines)


def render_savings(art: Artifact, ph: Artifact) -> str:
    """The saving first (or the time, when the question asks about time), then both picks."""
    a, b = art["before"], art["after"]
    lines: list[str] = []
    if art.get("scaled_hours") is not None:  # a measured run scaled to the other setup: the time first
        lines.append(str(ph["time_scaled"]).format(hours=_n(art["scaled_hours"]), observed=_n(art["observed_hours"]),
                                                   before=_config(a, ph), after=_config(b, ph),
                                                   hours_before=_n(a["hours"]), hours_after=_n(b["hours"])))
    elif art.get("by") == "hours" and art["delta_hours"] is not None:
        dh = float(art["delta_hours"])
        key = "time_same" if abs(dh) < 0.05 else "time_less" if dh < 0 else "time_more"
        lines.append(str(ph[key]).format(hours=_n(abs(dh)), hours_before=_n(a["hours"]), hours_after=_n(b["hours"])))
    if art["delta_cny"] is None:
        side = "before" if not a["priced"] else "after"
        lines.append(str(ph["save_missing"]).format(side=ph["save_side"][side]))
    else:
        delta = float(art["delta_cny"])
        key = "save_same" if abs(delta) < 0.5 else "save_less" if delta < 0 else "save_more"
        lines.append(str(ph[key]).format(amount=_n(abs(delta), 0), before=_n(a["cost_cny"], 0),
                                         after=_n(b["cost_cny"], 0), hours_before=_n(a["hours"]),
                                         hours_after=_n(b["hours"])))
    for side, r in (("before", a), ("after", b)):
        key = "save_row" if r["cost_cny"] is not None else "save_row_unpriced" if r["gpu"] else "save_row_no_fit"
        lines.append(str(ph[key]).format(side=ph["save_side"][side], config=_config(r, ph), hours=_n(r["hours"]),
                                         cost=_n(r["cost_cny"], 0), link=QUOTE_LINKS.get(str(r["cloud"]), "")))
    return "\n".join(lines)


def carried_line(frame: Frame, carried: tuple[str, ...], ph: Artifact, lang: str) -> str:
    """What a follow-up took from the question before it, said once: "按上文：Qwen2-7B、预算 ¥5,000/月、只用京东云"."""
    c, s = frame.constraints, frame.setup
    sep = "、" if lang == "zh" else ", "
    parts: list[str] = []
    for key in carried:
        if key == "model" and s.models:
            parts.append(s.models[0].name)
        elif key == "method" and s.method:
            parts.append(str(ph["method_names"].get(s.method, s.method)))
        elif key in ("gpu", "gpu_count") and (s.hardware.gpu or s.hardware.gpu_memory_gb):
            card = s.hardware.gpu or f"{s.hardware.gpu_memory_gb:g}G"
            part = f"{s.hardware.gpu_count} × {card}" if s.hardware.gpu_count else card
            if part not in parts:
                parts.append(part)
        elif key == "budget" and c.budget_cny:
            parts.append(str(ph["carried_budget"][c.budget_period or "month"]).format(amount=f"{c.budget_cny:,.0f}"))
        elif key == "clouds" and c.clouds:
            parts.append(str(ph["carried_clouds"]).format(
                clouds=sep.join(str(ph["cloud_names"].get(x, x)) for x in c.clouds)))
        elif key == "billing" and c.billing:
            parts.append(str(ph["billing_names"].get(c.billing, c.billing)))
        elif key == "deadline" and c.deadline_hours:
            parts.append(str(ph["carried_deadline"]).format(hours=f"{c.deadline_hours:g}"))
        elif key == "data" and (frame.data.samples or frame.data.tokens):
            d = frame.data
            parts.append(str(ph["carried_samples"]).format(n=f"{d.samples:,}") if d.samples
                         else str(ph["carried_tokens"]).format(n=f"{d.tokens:,.0f}"))
        elif key == "gpu_filter" and c.gpu_include:
            parts.append(str(ph["carried_only"]).format(gpus=sep.join(c.gpu_include)))
    return str(ph["carried"]).format(items=sep.join(parts)) if parts else ""
