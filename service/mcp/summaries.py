"""The short text an MCP tool returns beside its structured result, for the look-ups that are not question types
(the question types' summaries are their modules' own): the direct answer and its key figures, all copied from
the result (never computed here), well under 2,000 characters."""

from __future__ import annotations

from typing import Any

from service.labels import host_text, price_when
from service.planner.serving_inference import InferenceResult
from service.planner.serving_types import ServingPlan
from service.questions.summary_text import figure, plural, yuan

MAX_SUMMARY = 2000


def _cny(value: Any) -> str:
    return "price on request" if value is None else f"¥{value:,.0f}"


def clip(text: str, limit: int = MAX_SUMMARY) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def catalog(result: Any) -> str:
    """One line per instance row: its shape, the price it was sorted on with ¥/GPU-hour, ¥/TFLOPS-hour, the
    price's date and confidence (as many rows as fit; the rest are in the structured rows)."""
    rows = result.rows
    if result.kind != "instances":
        shown = ", ".join(str(r.get("instance_type") or r.get("id")) for r in rows[:8])
        return clip(f"{result.matched} {result.kind} matched" + (f"; {len(rows)} shown: {shown}" if rows else ""))
    said = {k: v for k, v in result.filters.items() if k != "sort"}
    head = (f"{result.matched} instances matched" + (f" ({', '.join(f'{k}={v}' for k, v in said.items())})"
                                                      if said else "")
            + f", sorted by {result.filters.get('sort', 'price-per-gpu')}" + (f"; {len(rows)} shown:" if rows else "."))
    lines = [head]
    billing = result.filters.get("billing")
    for n, r in enumerate(rows):
        line = _instance_line(r, billing)
        if sum(len(x) + 1 for x in lines) + len(line) > MAX_SUMMARY - 60:
            lines.append(f"… {len(rows) - n} more in the structured rows")
            break
        lines.append(line)
    return clip("\n".join(lines))


_BILLING_WORDS = {"on_demand": "on-demand", "monthly": "monthly", "spot": "spot"}


def _instance_line(r: dict[str, Any], billing: str | None) -> str:
    shape = (f"{r['instance_type']} ({r['cloud']}, {r['gpu_count']:g}x {r['gpu']} {r['gpu_memory_gib']:g} GiB, "
             f"{host_text(r.get('vcpus'), r.get('memory_gib'), 'en')}" + (", RDMA" if r["rdma"] else "") + ")")
    if r["price_on_request"]:
        return f"{shape}: price on request ({r['quote_link']})"
    prices = r["prices"]
    b = next((b for b in ((billing,) if billing else _BILLING_WORDS) if b in prices and not prices[b].get("on_request")),
             None)
    if b is None:
        return f"{shape}: no price"
    p = prices[b]
    per = f"¥{p['per_gpu_hour_cny']:,.2f}/GPU-hour" + (f", ¥{p['per_tflops_hour_cny']:g}/TFLOPS-hour"
                                                       if p["per_tflops_hour_cny"] is not None else "")
    return (f"{shape}: {_BILLING_WORDS[b]} ¥{p['price_cny']:,.2f}/{p['unit']} ({per}); {p['date']}; "
            f"{p['confidence']}" + (" promo" if p.get("promo") else "") + (" stale" if p.get("stale") else ""))


def _serving_figures(s: Any) -> str:
    return (f"weights {figure(s.weights_gib_per_gpu, 'GiB', '.1f')} + KV {figure(s.kv_cache_gib_per_gpu, 'GiB', '.1f')} "
            f"per GPU, KV pool {figure(s.kv_capacity_tokens, 'tokens', ',')}, {figure(s.max_concurrency, 'sequences')} "
            f"concurrent at {figure(s.max_model_len, 'tokens', ',')}; "
            f"{figure(s.output_tokens_per_s, 'output tokens/s', ',.1f')}, "
            f"TTFT {figure(s.ttft_ms, 'ms', ',.1f', 'not met (the queue grows)')}, TPOT {figure(s.tpot_ms, 'ms', '.1f')}")


def plan_serving(p: ServingPlan) -> str:
    if p.infeasible:
        return clip(f"Infeasible: {p.infeasible}")
    by_type = {c.instance_type: c for c in p.candidates}
    lines = []
    for cloud, itype in p.picks.items():
        c = by_type[itype]
        s = c.sizing
        price = c.price
        dated = (f" (price {price_when(price, 'en')}, {price.confidence})"
                 if price is not None else "")
        cost = ("price on request" if c.cost_per_month_cny is None else
                f"{yuan(c.cost_per_hour_cny, ',.2f')}/hour, {_cny(c.cost_per_month_cny)}/month {c.billing}{dated}, "
                f"{yuan(c.cny_per_million_output_tokens, ',.2f', 'no token price')} per million output tokens")
        lines.append(f"{cloud}: {itype} x {c.nodes} ({s.gpus_per_replica}x {c.gpu} per replica x "
                     f"{plural(c.replicas, 'replica')}), {cost}; {_serving_figures(s)}")
    return clip("\n".join(lines) or "No candidate.")


def size_inference(i: InferenceResult) -> str:
    head = (f"{i.gpus}x {i.gpu} per replica x {plural(i.replicas, 'replica')}, {i.engine} {i.weights}: "
            f"starts={i.starts} ({i.starts_reason})")
    s = i.sizing
    return clip(f"{head}; {_serving_figures(s)}" if s else (
        f"{head}; weights {figure(i.weights_gib_per_gpu, 'GiB', '.2f')} per GPU, KV pool "
        f"{figure(i.kv_capacity_tokens, 'tokens', ',')}, longest sequence {figure(i.max_model_len_fits, 'tokens', ',')}"))
