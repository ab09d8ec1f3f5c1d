"""Rich rendering of engine results for people (the JSON output is for machines)."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from service.labels import confidence_label, host_text, price_when, strip_internal
from service.planner.catalog_view import BILLINGS, CatalogInstance, InstancePrice
from service.planner.costing import QUOTE_LINKS
from service.planner.plan import Candidate, PlanResult


def _console() -> Console:
    con = Console()
    if not con.is_terminal:  # logs and pipes: wide enough that the plan table does not fold into slivers
        con = Console(width=170)
    return con


NARROW = 120  # below this many columns the tables drop their borders and empty columns, and the text columns fold


def candidate_table(con: Console, columns: list[str], rows: list[list[str]], names: list[str],
                    optional: tuple[str, ...] = ()) -> Table:
    """A table whose `instance` column always shows each name whole (never cut to "GT4.8X…"): on a narrow
    terminal (80-100 columns) the other text columns fold instead, the borders go, and `optional` columns with
    nothing in them ("—") are left out."""
    narrow = con.width < NARROW
    keep = [i for i, col in enumerate(columns)
            if not (narrow and col in optional and all(r[i] in ("—", "-", "") for r in rows))]
    t = Table(box=box.SIMPLE_HEAD if narrow else box.HEAVY_HEAD, pad_edge=not narrow, collapse_padding=narrow)
    widest = max((len(n) for n in names), default=8)
    for i in keep:
        col = columns[i]
        if col == "instance":
            t.add_column(col, no_wrap=True, min_width=widest)
        elif col in ("#",):
            t.add_column(col, no_wrap=True)
        else:
            t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(*[r[i] for i in keep])
    return t


def print_estimate(r: dict[str, Any]) -> None:
    con = _console()
    m, mem = r["model"], r["memory"]
    s = r["strategy"]
    con.print(f"[bold]{m['name']}[/] ({m['params_b']}B) · {s['method']} · {r['gpus']}x {r['gpu']}")
    t = Table("term", "GiB per GPU")
    for key in ("weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "buffers_gib"):
        t.add_row(key.removesuffix("_gib"), f"{mem[key]:.2f}")
    t.add_row("allocated", f"{mem['allocated_gib']:.2f}")
    t.add_row("+ allocator reserve", f"{mem['allocator_gib']:.2f}")
    t.add_row("reserved", f"{mem['reserved_gib']:.2f}")
    t.add_row("+ CUDA context, NCCL", f"{mem['runtime_gib']:.2f}")
    t.add_row("[bold]total", f"[bold]{mem['per_gpu_gib']:.2f}")
    if mem.get("paged_optimizer_gib"):
        t.add_row("paged optimizer (unified memory)", f"{mem['paged_optimizer_gib']:.2f}")
    con.print(t)
    v = r["memory_verdict"]
    colour = {"fits": "green", "tight": "yellow"}.get(v["status"], "red")
    con.print(f"[{colour}]{v['status'].replace('_', ' ')}[/] in {v['capacity_gib']:.1f} GiB usable of "
              f"{r['gpu_memory_gib']:g} GiB (margin {v['margin_gib']:+.1f} GiB, {v['margin_pct']:+.1f} %) · "
              f"{r['throughput_tokens_per_s']:,.0f} tokens/s · {r['training_hours']:,.1f} h")
    if v.get("room"):
        con.print(f"  [bold]room:[/] {v['room']['change']} ({v['room']['setting']}) -> "
                  f"{v['room']['need_gib']:.1f} GiB")
    for a in r["assumptions"]:
        con.print(f"  [dim]assumes[/] {a}")
    for w in r["warnings"]:
        con.print(f"  [yellow]![/] {w['message']}")


def _cost_cells(c: Candidate) -> tuple[str, str]:
    if c.cost is None:
        q = c.quote
        est = (f"est. {q.low_cny:,.0f}-{q.high_cny:,.0f}" if q is not None and q.low_cny is not None
               and q.high_cny is not None else "no estimate")
        return f"price on request\n{est}", "价格需询价\nask sales"
    p = c.cost.price
    return (f"{c.cost.total_cny:,.0f}\n{c.cost.billing}", f"¥{p.price_cny:g}/{p.unit}\n{price_when(p, 'en')} · "
                                                        f"{p.confidence}")


def _cost_text(c: Candidate) -> str:
    if c.cost is None:
        return "price on request (价格需询价)" + (f": {c.quote.link}" if c.quote is not None else "")
    return f"¥{c.cost.total_cny:,.0f} {c.cost.billing}"


def print_plan(result: PlanResult, top: int = 8) -> None:
    con = _console()
    job = result.job
    con.print(f"[bold]{job.model.name}[/] · {job.method} · {job.tokens_total / 1e6:,.1f}M tokens "
              f"({job.epochs:g} epochs) · seq {job.seq_len}")
    if not result.candidates:
        con.print(f"[red]No feasible option.[/] {result.infeasible}")
    rows, names = [], []
    for i, c in enumerate(result.candidates[:top], 1):
        nodes = f" ×{c.strategy.nodes} nodes" if c.strategy.nodes > 1 else ""
        names.append(c.inst.instance_type)
        rows.append([str(i), f"{c.inst.cloud}\n{c.inst.instance_type}",
                     f"{c.inst.gpu_count:g}× {c.gpu.id}{nodes}\n{host_text(c.inst.vcpus, c.inst.memory_gib, 'en')}",
                     c.strategy.label(), f"{c.memory.per_gpu_gib:.1f}/{c.inst.gpu_memory_gib:g}",
                     f"{c.hours:,.1f}", *_cost_cells(c), _verdict(c.within_budget), _verdict(c.meets_deadline)])
    columns = ["#", "instance", "GPUs · vCPU/RAM", "strategy", "GiB/GPU", "hours", "cost ¥", "price", "budget",
               "deadline"]
    con.print(candidate_table(con, columns, rows, names, optional=("budget", "deadline")))
    for cloud, c in result.picks().items():
        con.print(f"pick on {cloud}: [bold]{c.inst.instance_type}[/] ({c.inst.gpu_count:g}× {c.gpu.id}) · "
                  f"{c.hours:,.1f} h · {_cost_text(c)}")
    for kind, c in result.alternatives().items():
        con.print(f"{kind}: {c.inst.instance_type} · {c.hours:,.1f} h · {_cost_text(c)}")
    sized = (("fastest within your budget", result.fastest_within_budget(), result.workload.budget_cny),
             ("cheapest within your deadline", result.cheapest_within_deadline(), result.workload.deadline_hours))
    for label, best, given in sized:
        if best is not None and given is not None:
            con.print(f"{label}: {best.inst.instance_type} × {best.strategy.nodes} node(s) = "
                      f"{best.strategy.total_gpus}× {best.gpu.id} · {best.hours:,.1f} h · {_cost_text(best)}")
    if result.candidates:
        for w in result.candidates[0].warnings:
            con.print(f"  [yellow]![/] {w.en}")
    for n in result.notes:
        con.print(f"  [cyan]i[/] {n.en}")
    for a in result.assumptions:
        con.print(f"  [dim]assumes[/] {a}")
    con.print(f"[dim]{len(result.rejected)} instances rejected (see --json for reasons)[/]")


def _verdict(v: bool | None) -> str:
    return "—" if v is None else ("[green]yes" if v else "[red]no")


_BILLING_EN = {"on_demand": "on-demand", "monthly": "monthly", "spot": "spot"}
_UNIT = {"hour": "h", "month": "mo"}


def print_catalog(rows: list[CatalogInstance], billing: str | None = None) -> None:
    """The catalog query's rows: instance names whole (the other columns fold), each price with ¥/GPU-hour,
    ¥/TFLOPS-hour, its date (or when an undated page was captured), its confidence and a numbered source listed
    under the table, one address a line (never broken, so a terminal keeps it clickable)."""
    con = _console()
    shown = [billing] if billing else (["on_demand", "monthly"] if con.width < NARROW else list(BILLINGS))
    sources: dict[str, int] = {}
    cells = []
    for r in rows:
        net = " · ".join(x for x in (f"{r.network_gbps:g} Gb/s" if r.network_gbps else "",
                                     "RDMA" if r.rdma else "") if x)
        cells.append([f"{r.cloud}\n{r.instance_type}",
                      f"{r.gpu_count:g}x {r.gpu}\n{r.gpu_memory_gib:g} GiB each\n"
                      + host_text(r.vcpus, r.memory_gib, "en").replace(" / ", " · ") + (f"\n{net}" if net else ""),
                      *[_price_cell(r.price(b), sources, r.price_on_request and i == 0) for i, b in enumerate(shown)]])
    columns = ["instance", "GPUs · host", *[f"{_BILLING_EN[b]} ¥" for b in shown]]
    con.print(candidate_table(con, columns, cells, [r.instance_type for r in rows]))
    hidden = [_BILLING_EN[b] for b in BILLINGS if b not in shown]
    con.print(f"{len(rows)} instances" + (f" ({', '.join(hidden)} prices: --billing, or --json)" if hidden else ""))
    if any(r.price_on_request for r in rows):
        clouds = sorted({r.cloud for r in rows})
        con.print("price on request: ask the cloud (" + "; ".join(f"{c} {QUOTE_LINKS[c]}" for c in clouds) + ")",
                  soft_wrap=True)
    for key, n in sources.items():
        con.print(f"[{n}] {key}", soft_wrap=True, markup=False, highlight=False)


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
            f"{p.date_en} · {confidence_label(p.confidence, 'en')}{stale} [{n}]")


def print_prices(prices: list[dict[str, Any]]) -> None:
    """One instance's prices, a line each: billing, the figure, its date as a reader reads it (the content's age, when
    it was read, and whether it may have changed), its confidence and its source."""
    con = _console()
    for p in prices:
        price = (f"¥{p['price_low_cny']:,.2f}-{p['price_cny']:,.2f}" if p.get("price_low_cny") else f"¥{p['price_cny']:,.2f}")
        flags = " · price on request (reference)" if p.get("on_request") else " · promotion" if p.get("promo") else ""
        con.print(f"{_BILLING_EN[p['billing']]}: {price}/{p['unit']} · {p['date_en']} · "
                  f"{confidence_label(p['confidence'], 'en')}{flags}\n  {strip_internal(p['source'])}",
                  soft_wrap=True, markup=False, highlight=False)


def print_mapping(obj: dict[str, Any]) -> None:
    t = Table("field", "value")
    for k, v in obj.items():
        t.add_row(k, str(v))
    _console().print(t)
