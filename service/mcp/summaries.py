"""The short text each tool returns beside its structured artifact: the direct answer and its key figures, all
copied from the artifact (never computed here)."""

from __future__ import annotations

from typing import Any

Artifact = dict[str, Any]


def _cny(value: Any) -> str:
    return "price on request" if value is None else f"¥{value:,.0f}"


def plan(p: Artifact) -> str:
    if p.get("infeasible"):
        return f"Infeasible: {p['infeasible']}"
    by_type = {c["instance_type"]: c for c in p["candidates"]}
    lines = []
    for cloud, itype in p["picks"].items():
        c = by_type[itype]
        lines.append(f"{cloud}: {itype} ({c['gpu_count']:g}x {c['gpu']}, {c['strategy']['label']}), "
                     f"{c['memory_per_gpu_gib']}/{c['gpu_memory_gib']:g} GiB per GPU, {c['training_hours']} h, "
                     f"{_cny(c['total_cost_cny'])} {c['billing']}, within_budget={c['within_budget']}")
    return "\n".join(lines) or "No candidate."


def estimate(e: Artifact) -> str:
    return (f"{e['gpus']}x {e['gpu']}: {e['memory']['per_gpu_gib']} GiB per GPU of {e['gpu_memory_gib']:g} GiB, "
            f"fits={e['fits']}, {e['training_hours']} h")


def feasibility(f: Artifact) -> str:
    text = (f"{f['gpu_count']}x {f['gpu']}: {f['per_gpu_gib']} GiB per GPU of {f['gpu_memory_gib']:g} GiB "
            f"({f['usable_gib']} usable), fits={f['fits']}, fewest cards that fit: {f['gpus_needed']}")
    if f["fits_with"]:
        text += "; fits with: " + ", ".join(
            f"{r['change']} ({r['gpu_count']}x, {r['per_gpu_gib']} GiB)" for r in f["fits_with"])
    return text


def min_gpus(m: Artifact) -> str:
    if m["gpu"] is None:
        return (f"one card needs {m['single_gpu_gib']} GiB (at least {m['min_memory_gib']} GiB of GPU memory); "
                + ", ".join(f"{o['gpu']}: {o['gpus_needed']}" for o in m["options"]))
    return (f"gpus_needed={m['gpus_needed']} x {m['gpu']} ({m['per_gpu_gib']} GiB per GPU); "
            f"one card would need {m['single_gpu_gib']} GiB")


def compare(c: Artifact) -> str:
    return f"winner={c['winner']} by {c['by']}; " + "; ".join(
        f"{r['option']}: fits={r['fits']}, {r['hours']} h, {_cny(r['cost_cny'])}" for r in c["comparison"])


def savings(s: Artifact) -> str:
    return (f"before {s['before']['instance_type']} {_cny(s['before']['cost_cny'])}, after "
            f"{s['after']['instance_type']} {_cny(s['after']['cost_cny'])}: delta ¥{s['delta_cny']}, "
            f"{s['delta_hours']} h")


def capacity(c: Artifact) -> str:
    head = f"{c['gpu_count']}x {c['gpu']} ({c['usable_gib']} GiB usable each)"
    if c["target"] == "model_size":
        return head + ": " + "; ".join(
            f"{r['method']}: up to ~{r['max_params_b']}B"
            + (f" (largest catalog model that fits: {r['largest_fitting']['model']})" if r["largest_fitting"] else "")
            for r in c["rows"])
    if c["target"] == "context":
        return f"{head}: longest sequence {c['max_seq_len']} tokens ({c['per_gpu_gib']} GiB per GPU there)"
    return f"{head}: largest micro-batch {c['max_micro_batch']} ({c['per_gpu_gib']} GiB per GPU there)"


def diagnose(d: Artifact) -> str:
    causes = ", ".join(str(x["code"]) for x in d["causes"]) or "none"
    fixes = ", ".join(str(x["code"]) for x in d["fixes"]) or "none"
    return (f"expected={d['expected']}; engine: {d['per_gpu_gib']} GiB per GPU of {d['gpu_memory_gib']:g} GiB "
            f"(fits={d['fits']}), {d['training_hours']} h; causes: {causes}; fixes: {fixes}")


def fact(f: Artifact) -> str:
    rows = f.get("rows") or []
    head = f"{f['fact']}" + (f" {f['gpu']}" if f["gpu"] else "") + f": {f.get('answer')}"
    if f.get("value") is not None:
        head += f" ({f['value']})"
    if rows:
        head += "; " + ", ".join(f"{r['cloud']} {r['instance_type']}" for r in rows[:6])
    if f.get("cloud_gpus"):
        head += "; " + "; ".join(f"{c}: {', '.join(g)}" for c, g in f["cloud_gpus"].items())
    return head


def catalog(c: Artifact) -> str:
    rows = c["rows"]
    shown = ", ".join(str(r.get("instance_type") or r.get("id")) for r in rows[:8])
    return f"{c['matched']} {c['kind']} matched" + (f"; {len(rows)} shown: {shown}" if rows else "")


def knowledge(k: Artifact) -> str:
    text = "\n\n".join(f"[{p['id']}] {p['text'][:600]}" for p in k["passages"])  # the text opens with its title
    return text or "No passage found."


def _serving_figures(s: Artifact) -> str:
    return (f"KV pool {s['kv_capacity_tokens']:,} tokens, {s['max_concurrency']:g} concurrent at "
            f"{s['max_model_len']} tokens; {s['output_tokens_per_s']} output tokens/s, TTFT {s['ttft_ms']} ms, "
            f"TPOT {s['tpot_ms']} ms")


def plan_serving(p: Artifact) -> str:
    if p.get("infeasible"):
        return f"Infeasible: {p['infeasible']}"
    by_type = {c["instance_type"]: c for c in p["candidates"]}
    lines = []
    for cloud, itype in p["picks"].items():
        c = by_type[itype]
        s = c["sizing"]
        cost = ("price on request" if c["cost_per_month_cny"] is None else
                f"¥{c['cost_per_hour_cny']:,.2f}/hour, {_cny(c['cost_per_month_cny'])}/month {c['billing']}, "
                f"¥{c['cny_per_million_output_tokens']} per million output tokens")
        lines.append(f"{cloud}: {itype} x {c['nodes']} ({s['gpus_per_replica']}x {c['gpu']} per replica x "
                     f"{c['replicas']} replicas), {cost}; {_serving_figures(s)}")
    return "\n".join(lines) or "No candidate."


def size_inference(i: Artifact) -> str:
    head = (f"{i['gpus']}x {i['gpu']} per replica x {i['replicas']} replicas, {i['engine']} {i['weights']}: "
            f"starts={i['starts']} ({i['starts_reason']}); weights {i['weights_gib_per_gpu']} GiB per GPU")
    s = i.get("sizing")
    return f"{head}; {_serving_figures(s)}" if s else (
        f"{head}; KV pool {i['kv_capacity_tokens']:,} tokens, longest sequence {i['max_model_len_fits']:,} tokens")
