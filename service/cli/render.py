"""Rendering of engine results for people (the JSON output is for machines), laid out to the terminal's width
(service/cli/layout.py): a table when its columns fit with every name and number whole, else one block per row."""

from __future__ import annotations

from typing import Any

from service.cli.layout import NBSP, Out
from service.labels import confidence_label, host_text, price_when, strip_internal
from service.planner.catalog_view import BILLINGS, CatalogInstance, InstancePrice
from service.planner.costing import QUOTE_LINKS
from service.planner.plan import Candidate, PlanResult

NOTE = "  "  # the indent of warnings, notes and assumptions under a result


def output() -> Out:
    """Where the commands print (a test may replace it)."""
    return Out()


def keep(text: str) -> str:
    """Words that belong together on one line ('¥463 on_demand', '8.1 h')."""
    return text.replace(" ", NBSP)


def fig(value: float, unit: str, spec: str) -> str:
    """A figure and its unit, never apart: '35.9 GiB'."""
    return f"{value:{spec}}{NBSP}{unit}"


def short(text: str, most: int = 24) -> str:
    """A short phrase kept on one line ('captured 2026-12-01'); a sentence wraps between its words."""
    return keep(text) if len(text) <= most else text


def host(vcpus: int | None, memory_gib: float | None, sep: str = " / ") -> str:
    """'96 vCPU / 384 GiB' (or what is not published), each half whole."""
    return sep.join(keep(x) for x in host_text(vcpus, memory_gib, "en").split(" / "))


def notes(out: Out, mark: str, items: list[str]) -> None:
    for item in items:
        out.line(item, NOTE + mark + " ", NOTE + "  ")


def print_estimate(r: dict[str, Any]) -> None:
    out = output()
    m, mem = r["model"], r["memory"]
    s = r["strategy"]
    out.line(f"[bold]{m['name']}[/] ({m['params_b']}B) · {s['method']} · {r['gpus']}x {r['gpu']}")
    rows = [[key.removesuffix("_gib"), f"{mem[key]:.2f}"] for key in
            ("weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "buffers_gib")]
    rows += [["allocated", f"{mem['allocated_gib']:.2f}"], ["+ allocator reserve", f"{mem['allocator_gib']:.2f}"],
             ["reserved", f"{mem['reserved_gib']:.2f}"], ["+ CUDA context, NCCL", f"{mem['runtime_gib']:.2f}"],
             ["[bold]total[/]", f"[bold]{mem['per_gpu_gib']:.2f}[/]"]]
    if mem.get("paged_optimizer_gib"):
        rows.append(["paged optimizer (unified memory)", f"{mem['paged_optimizer_gib']:.2f}"])
    out.table(["term", "GiB per GPU"], rows)
    v = r["memory_verdict"]
    colour = {"fits": "green", "tight": "yellow"}.get(v["status"], "red")
    usable, total = fig(v["capacity_gib"], "GiB", ".1f"), fig(r["gpu_memory_gib"], "GiB", "g")
    margin, pct = fig(v["margin_gib"], "GiB", "+.1f"), fig(v["margin_pct"], "%", "+.1f")
    speed, hours = fig(r["throughput_tokens_per_s"], "tokens/s", ",.0f"), fig(r["training_hours"], "h", ",.1f")
    out.line(f"[{colour}]{v['status'].replace('_', ' ')}[/] in {usable} usable of {total} (margin {margin}, {pct}) · "
             f"{speed} · {hours}")
    if v.get("room"):
        room = v["room"]
        out.line(f"[bold]room:[/] {room['change']} ({room['setting']}) -> {fig(room['need_gib'], 'GiB', '.1f')}",
                 NOTE, NOTE + "  ")
    notes(out, "[dim]assumes[/]", list(r["assumptions"]))
    notes(out, "[yellow]![/]", [w["message"] for w in r["warnings"]])


def _price_text(c: Candidate) -> str:
    if c.cost is None:
        q = c.quote
        est = (f"est. ¥{q.low_cny:,.0f}-{q.high_cny:,.0f}" if q is not None and q.low_cny is not None
               and q.high_cny is not None else "no estimate")
        return f"价格需询价 (price on request), {est}"
    p = c.cost.price
    return f"¥{p.price_cny:g}/{p.unit} · {price_when(p, 'en')} · {p.confidence}"


def _cost_text(c: Candidate) -> str:
    if c.cost is None:
        return keep("price on request") + " (价格需询价)" + (f": {c.quote.link}" if c.quote is not None else "")
    return keep(f"¥{c.cost.total_cny:,.0f} {c.cost.billing}")


def _verdict(v: bool | None) -> str:
    return "—" if v is None else ("[green]yes[/]" if v else "[red]no[/]")


def _plan_rows(result: PlanResult, top: int) -> list[list[str]]:
    rows = []
    for i, c in enumerate(result.candidates[:top], 1):
        nodes = f" ×{c.strategy.nodes} nodes" if c.strategy.nodes > 1 else ""
        cost = (f"{c.cost.total_cny:,.0f}\n{c.cost.billing}" if c.cost is not None else "price on request")
        rows.append([str(i), f"{c.inst.cloud}\n{c.inst.instance_type}",
                     keep(f"{c.inst.gpu_count:g}× {c.gpu.id}{nodes}") + f"\n{host(c.inst.vcpus, c.inst.memory_gib)}",
                     c.strategy.label(), f"{c.memory.per_gpu_gib:.1f}/{c.inst.gpu_memory_gib:g}", f"{c.hours:,.1f}",
                     cost, _price_text(c), _verdict(c.within_budget), _verdict(c.meets_deadline)])
    return rows


def _plan_block(out: Out, n: int, c: Candidate) -> None:
    """One candidate on a narrow terminal: where, what, how long and how much, the price's source."""
    nodes = f" ×{c.strategy.nodes} nodes" if c.strategy.nodes > 1 else ""
    head = f"{n}".ljust(3)
    out.line(f"[bold]{c.inst.cloud} {c.inst.instance_type}[/] · {keep(f'{c.inst.gpu_count:g}× {c.gpu.id}{nodes}')} · "
             f"{host(c.inst.vcpus, c.inst.memory_gib)}", head, " " * 3)
    out.line(c.strategy.label(), "   ")
    verdicts = [f"{what} {_verdict(v)}" for what, v in (("budget", c.within_budget), ("deadline", c.meets_deadline))
                if v is not None]
    figures = [keep(f"{c.memory.per_gpu_gib:.1f}/{c.inst.gpu_memory_gib:g} GiB per GPU"), keep(f"{c.hours:,.1f} h"),
               _cost_text(c) if c.cost is not None else "price on request", *verdicts]
    out.line(" · ".join(figures), "   ")
    out.line(f"[dim]{_price_text(c)}[/]", "   ")


PLAN_COLUMNS = ["#", "instance", "GPUs · vCPU/RAM", "strategy", "GiB/GPU", "hours", "cost ¥", "price", "budget",
                "deadline"]


def print_plan(result: PlanResult, top: int = 8) -> None:
    out = output()
    job = result.job
    out.line(f"[bold]{job.model.name}[/] · {job.method} · {keep(f'{job.tokens_total / 1e6:,.1f}M tokens')} "
             f"({keep(f'{job.epochs:g} epochs')}) · {keep(f'seq {job.seq_len}')}")
    if not result.candidates:
        out.line(f"[red]No feasible option.[/] {result.infeasible}")
    rows = _plan_rows(result, top)
    keep_cols = [i for i, col in enumerate(PLAN_COLUMNS)  # a verdict column nobody asked for is left out
                 if col not in ("budget", "deadline") or any(r[i] != "—" for r in rows)]
    shown = [[r[i] for i in keep_cols] for r in rows]
    if rows and not out.table([PLAN_COLUMNS[i] for i in keep_cols], shown):
        for n, c in enumerate(result.candidates[:top], 1):
            _plan_block(out, n, c)
    for cloud, c in result.picks().items():
        out.line(f"pick on {cloud}: [bold]{c.inst.instance_type}[/] ({keep(f'{c.inst.gpu_count:g}× {c.gpu.id}')}) · "
                 f"{keep(f'{c.hours:,.1f} h')} · {_cost_text(c)}", "", "  ")
    for kind, c in result.alternatives().items():
        out.line(f"{kind}: {c.inst.instance_type} · {keep(f'{c.hours:,.1f} h')} · {_cost_text(c)}", "", "  ")
    sized = (("fastest within your budget", result.fastest_within_budget(), result.workload.budget_cny),
             ("cheapest within your deadline", result.cheapest_within_deadline(), result.workload.deadline_hours))
    for label, best, given in sized:
        if best is not None and given is not None:
            out.line(f"{label}: {best.inst.instance_type} × {keep(f'{best.strategy.nodes} node(s)')} = "
                     f"{keep(f'{best.strategy.total_gpus}× {best.gpu.id}')} · {keep(f'{best.hours:,.1f} h')} · "
                     f"{_cost_text(best)}", "", "  ")
    if result.candidates:
        notes(out, "[yellow]![/]", [w.en for w in result.candidates[0].warnings])
    notes(out, "[cyan]i[/]", [n.en for n in result.notes])
    notes(out, "[dim]assumes[/]", list(result.assumptions))
    out.line(f"[dim]{len(result.rejected)} instances rejected (see --json for reasons)[/]")


_BILLING_EN = {"on_demand": "on-demand", "monthly": "monthly", "spot": "spot"}
_UNIT = {"hour": "h", "month": "mo"}


def print_catalog(rows: list[CatalogInstance], billing: str | None = None) -> None:
    """The catalog query's rows: instance names whole, each price with ¥/GPU-hour, ¥/TFLOPS-hour, its date (or when
    an undated page was captured), its confidence and a numbered source listed under the rows, one address a line
    (never broken, so a terminal keeps it clickable). A table with every billing when it fits, else with on-demand
    and monthly, else one block per instance."""
    out = output()
    every: list[str] = [billing] if billing else list(BILLINGS)
    shown: list[str] = every
    sources: dict[str, int] = {}
    attempt: list[str]
    for attempt in (every, [] if billing else ["on_demand", "monthly"]):
        sources = {}
        cells = [_catalog_row(r, attempt, sources) for r in rows]
        if attempt and out.table(["instance", "GPUs · host", *[f"{_BILLING_EN[b]} ¥" for b in attempt]], cells):
            shown = attempt
            break
    else:
        sources = {}
        for r in rows:
            _catalog_block(out, r, every, sources)
    hidden = [_BILLING_EN[b] for b in BILLINGS if b not in shown]
    out.line(f"{len(rows)} instances" + (f" ({', '.join(hidden)} prices: --billing, or --json)" if hidden else ""))
    if any(r.price_on_request for r in rows):
        clouds = sorted({r.cloud for r in rows})
        out.line("price on request: ask the cloud (" + "; ".join(f"{c} {QUOTE_LINKS[c]}" for c in clouds) + ")",
                 "", "  ")
    for key, n in sources.items():
        out.line(_escape(f"[{n}] {key}"), "", "    ")


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _catalog_row(r: CatalogInstance, shown: list[str], sources: dict[str, int]) -> list[str]:
    net = " · ".join(x for x in (f"{r.network_gbps:g} Gb/s" if r.network_gbps else "", "RDMA" if r.rdma else "") if x)
    return [f"{r.cloud}\n{r.instance_type}",
            keep(f"{r.gpu_count:g}x {r.gpu}") + f"\n{keep(f'{r.gpu_memory_gib:g} GiB each')}\n"
            f"{host(r.vcpus, r.memory_gib, ' · ')}" + (f"\n{keep(net)}" if net else ""),
            *[_price_cell(r.price(b), sources, r.price_on_request and i == 0) for i, b in enumerate(shown)]]


def _catalog_block(out: Out, r: CatalogInstance, shown: list[str], sources: dict[str, int]) -> None:
    net = [x for x in (f"{r.network_gbps:g} Gb/s" if r.network_gbps else "", "RDMA" if r.rdma else "") if x]
    out.line(f"[bold]{r.cloud} {r.instance_type}[/] · " + " · ".join(keep(x) for x in (
        f"{r.gpu_count:g}x {r.gpu}", f"{r.gpu_memory_gib:g} GiB each")) + f" · {host(r.vcpus, r.memory_gib, ' · ')}"
             + "".join(f" · {keep(x)}" for x in net), "", "  ")
    for i, b in enumerate(shown):
        cell = _price_cell(r.price(b), sources, r.price_on_request and i == 0)
        if cell != "—":
            out.line(f"{_BILLING_EN[b]} " + " · ".join(keep(x) for x in cell.split("\n")), "  ", "    ")


def _cny(value: float) -> str:
    return f"{value:,.2f}" if value < 1000 else f"{value:,.0f}"


def _price_cell(p: InstancePrice | None, sources: dict[str, int], on_request: bool) -> str:
    if on_request or (p is not None and p.on_request):
        return "price on request"
    if p is None:
        return "—"
    key = f"{confidence_label(p.confidence, 'en')}: {strip_internal(p.source)}"
    n = sources.setdefault(key, len(sources) + 1)
    per_tflops = f"\n¥{p.per_tflops_hour_cny:g}/TFLOPS-h" if p.per_tflops_hour_cny is not None else ""
    stale = " stale" if p.stale else ""
    return (f"¥{_cny(p.price_cny)}/{_UNIT[p.unit]}\n¥{p.per_gpu_hour_cny:,.2f}/GPU-h{per_tflops}\n"
            f"{short(p.date_en)} · {keep(confidence_label(p.confidence, 'en') + stale)} \\[{n}]")


def print_mapping(obj: dict[str, Any]) -> None:
    out = output()
    rows = [[_escape(str(k)), _escape(str(v))] for k, v in obj.items()]
    if not out.table(["field", "value"], rows):
        for k, v in obj.items():
            out.line(f"[bold]{_escape(str(k))}[/]: {_escape(str(v))}", "", "  ")


def print_prices(prices: list[dict[str, Any]]) -> None:
    """One instance's prices, a line each: billing, the figure, its date as a reader reads it (the content's age, when
    it was read, and whether it may have changed), its confidence and, under it, its source (a link kept whole)."""
    out = output()
    for p in prices:
        price = (f"¥{p['price_low_cny']:,.2f}-{p['price_cny']:,.2f}" if p.get("price_low_cny")
                 else f"¥{p['price_cny']:,.2f}")
        flags = " · price on request (reference)" if p.get("on_request") else " · promotion" if p.get("promo") else ""
        out.line(_escape(f"{_BILLING_EN[p['billing']]}: {keep(price + '/' + p['unit'])} · {p['date_en']} · "
                         f"{confidence_label(p['confidence'], 'en')}{flags}"), "", "  ")
        out.line(_escape(strip_internal(p["source"])), "  ", "  ")
