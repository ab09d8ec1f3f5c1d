"""`gpu-advisor inference` (one model on one GPU type) and `gpu-advisor plan-serving` (every instance on the
clouds, costed for 24x7 serving)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from service.cli.common import emit_json, guarded, load

if TYPE_CHECKING:
    from service.serving_workload import ServingWorkload

Weights = Literal["bf16", "fp16", "fp8", "int8", "int4", "mxfp4"]
KvDtype = Literal["auto", "bf16", "fp16", "fp8"]
EngineName = Literal["vllm", "sglang", "trtllm", "lmdeploy"]

ModelOpt = Annotated[str, typer.Option("--model", help="model name, HF repo id, size (14B) or config.json path")]
GpusOpt = Annotated[int | None, typer.Option("--gpus", min=1, max=64, help="GPUs per replica (tensor parallel)")]
WeightsOpt = Annotated[Weights, typer.Option("--weights", help="weight dtype (int4 = AWQ/GPTQ)")]
KvOpt = Annotated[KvDtype, typer.Option("--kv-dtype")]
EngineOpt = Annotated[EngineName, typer.Option("--engine")]
FracOpt = Annotated[float | None, typer.Option("--mem-fraction", help="gpu_memory_utilization / mem_fraction_static")]
LenOpt = Annotated[int | None, typer.Option("--max-model-len")]
InOpt = Annotated[int | None, typer.Option("--input-tokens", help="prompt tokens per request")]
OutOpt = Annotated[int | None, typer.Option("--output-tokens", help="output tokens per request")]
ConcOpt = Annotated[float | None, typer.Option("--concurrency", help="requests in flight at the peak")]
RateOpt = Annotated[float | None, typer.Option("--request-rate", help="requests per second")]
TtftOpt = Annotated[float | None, typer.Option("--ttft-ms", help="time-to-first-token limit")]
TpotOpt = Annotated[float | None, typer.Option("--tpot-ms", help="time-per-output-token limit")]
JsonOpt = Annotated[bool, typer.Option("--json")]


def _workload(**fields: Any) -> ServingWorkload:
    from service.serving_workload import ServingWorkload

    return ServingWorkload.model_validate({k: v for k, v in fields.items() if v is not None})


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def inference(model: ModelOpt, gpu: Annotated[str, typer.Option("--gpu", help="GPU, e.g. L20, A10, H800")],
                  gpus: GpusOpt = None, weights: WeightsOpt | None = None, kv_dtype: KvOpt = "auto",
                  engine: EngineOpt = "vllm", mem_fraction: FracOpt = None, max_model_len: LenOpt = None,
                  input_tokens: InOpt = None, output_tokens: OutOpt = None, concurrency: ConcOpt = None,
                  request_rate: RateOpt = None, ttft_ms: TtftOpt = None, tpot_ms: TpotOpt = None,
                  json_out: JsonOpt = False) -> None:
        """Serving one model on one GPU type: weights per GPU, KV cache in tokens, the concurrency it holds,
        whether the engine starts, and tokens/s, TTFT and TPOT at the load."""
        from service.planner.serving_inference import inference as run

        w = _workload(model=model, gpu=gpu, gpus=gpus, weights=weights, kv_dtype=kv_dtype, engine=engine,
                      mem_fraction=mem_fraction, max_model_len=max_model_len, input_tokens=input_tokens,
                      output_tokens=output_tokens, concurrency=concurrency, request_rate=request_rate,
                      ttft_ms=ttft_ms, tpot_ms=tpot_ms)
        result = run(w, load())
        emit_json(result.model_dump(mode="json")) if json_out else _print_inference(result)

    @app.command("plan-serving")
    @guarded
    def plan_serving(model: ModelOpt, gpu: Annotated[str | None, typer.Option("--gpu", help="pin one GPU")] = None,
                     gpus: GpusOpt = None, weights: WeightsOpt | None = None, kv_dtype: KvOpt = "auto",
                     engine: EngineOpt = "vllm", mem_fraction: FracOpt = None, max_model_len: LenOpt = None,
                     input_tokens: InOpt = None, output_tokens: OutOpt = None, concurrency: ConcOpt = None,
                     request_rate: RateOpt = None, ttft_ms: TtftOpt = None, tpot_ms: TpotOpt = None,
                     cloud: Annotated[list[str] | None, typer.Option(help="tencent | jdcloud (repeatable)")] = None,
                     billing: Annotated[Literal["on_demand", "monthly", "spot"] | None, typer.Option()] = None,
                     objective: Annotated[Literal["cheapest", "fastest", "balanced"], typer.Option()] = "cheapest",
                     budget_cny: Annotated[float | None, typer.Option(help="monthly budget")] = None,
                     top: Annotated[int, typer.Option(help="options to show")] = 8,
                     bundle: Annotated[Path | None, typer.Option(help="write the pick's launch bundle here")] = None,
                     json_out: JsonOpt = False) -> None:
        """Rank every instance on Tencent Cloud and JD Cloud for serving a model at a load: GPUs per replica x
        replicas, cost per month and per million output tokens, and the launch commands."""
        run_serving_plan(dict(model=model, gpu=gpu, gpus=gpus, weights=weights, kv_dtype=kv_dtype, engine=engine,
                              mem_fraction=mem_fraction, max_model_len=max_model_len, input_tokens=input_tokens,
                              output_tokens=output_tokens, concurrency=concurrency, request_rate=request_rate,
                              ttft_ms=ttft_ms, tpot_ms=tpot_ms, clouds=cloud or None, billing=billing,
                              objective=objective, budget_cny=budget_cny), top=top, json_out=json_out,
                         bundle=bundle)


def run_serving_plan(fields: dict[str, Any], *, top: int, json_out: bool, bundle: Path | None = None,
                     prices: Path | None = None) -> None:
    """The serving plan for these workload fields (None = not given): `plan-serving` and `plan --kind serving`."""
    from service.planner.contract import make_plan
    from service.settings import get_settings

    result = make_plan(_workload(**fields), load(prices), max_price_age_days=get_settings().price_max_age_days)
    if bundle is not None:
        _write_bundle(result, bundle)
    emit_json(result.model_dump(mode="json")) if json_out else _print_plan(result, top)


def _write_bundle(plan: Any, folder: Path) -> None:
    from service.documents.serving_bundle import EXECUTABLE, serving_bundle

    b = serving_bundle(plan)
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in b.files.items():
        path = folder / name
        path.write_text(text, encoding="utf-8")
        if name in EXECUTABLE:
            path.chmod(0o755)
    typer.echo(f"bundle written to {folder}", err=True)


def _print_inference(r: Any) -> None:
    from service.cli.render import NOTE, fig, notes, output

    out = output()
    verdict = "[green]starts[/]" if r.starts else "[red]does not start[/]"
    shape = f"TP{r.tensor_parallel}" + (f" x PP{r.pipeline_parallel}" if r.pipeline_parallel > 1 else "")
    out.line(f"[bold]{r.model.name}[/] on {r.gpus}x {r.gpu} ({shape}, {r.engine}, {r.weights}, KV {r.kv_dtype}): "
             f"{verdict}")
    out.line(f"[dim]{r.engine_assumed}[/]", NOTE)
    out.line(f"weights {fig(r.weights_gib_per_gpu, 'GiB/GPU', '.2f')} · KV {fig(r.kv_bytes_per_token, 'B/token/GPU', ',.0f')}"
             f" · pool {fig(r.kv_cache_gib_per_gpu, 'GiB', '.2f')} = {fig(r.kv_capacity_tokens, 'tokens', ',')} · "
             f"{r.max_concurrency:g}x {r.max_model_len:,}-token sequences", NOTE)
    out.line(r.starts_reason, NOTE)
    if r.fix:
        out.line(f"[bold]fix:[/] {r.fix}", NOTE, NOTE + "  ")
    notes(out, "[dim]note[/]", list(r.notes))
    if r.output_tokens_per_s is not None:
        ttft = "queue grows" if r.ttft_ms is None else fig(r.ttft_ms, "ms", ",.0f")
        who = "1 deployment" if r.replicas == 1 else f"{r.replicas} replicas"
        out.line(f"{who}: {fig(r.output_tokens_per_s, 'output tok/s', ',.0f')} · TTFT {ttft} · TPOT "
                 f"{fig(r.tpot_ms, 'ms', '.1f')} at {r.input_tokens}+{r.output_tokens} tokens; holds "
                 f"{r.max_concurrency_at_load:g} such requests per replica", NOTE, NOTE + "  ")
        out.line(f"[dim]{r.headroom}[/]", NOTE, NOTE + "  ")
    notes(out, "[dim]assumes[/]", list(r.assumptions))
    if r.launch is not None:
        out.raw(r.launch.vllm)


SERVING_COLUMNS = ["#", "instance", "GPUs", "replicas x TP", "out tok/s", "TTFT ms", "TPOT ms", "¥/month", "¥/1M out"]


def _print_plan(p: Any, top: int) -> None:
    from service.cli.render import fig, keep, notes, output

    out = output()
    out.line(f"[bold]{p.model.name}[/] serving · {len(p.candidates)} options · [dim]{p.engine_assumed}[/]")
    if p.infeasible:
        out.line(f"[red]{p.infeasible}[/]")
    shown = p.candidates[:top]
    rows = []
    for i, c in enumerate(shown, 1):
        s = c.sizing
        rows.append([str(i), f"{c.cloud}\n{c.instance_type}", f"{c.nodes} x {c.gpu_count:g} {c.gpu}",
                     f"{c.replicas} x {c.gpus_per_replica}", f"{s.output_tokens_per_s:,.0f}",
                     "-" if s.ttft_ms is None else f"{s.ttft_ms:,.0f}", f"{s.tpot_ms:.1f}",
                     "on request" if c.cost_per_month_cny is None else f"{c.cost_per_month_cny:,.0f} {c.billing}",
                     "-" if c.cny_per_million_output_tokens is None else f"{c.cny_per_million_output_tokens:,.2f}"])
    if rows and not out.table(SERVING_COLUMNS, rows):
        for i, c in enumerate(shown, 1):  # one block per option on a narrow terminal
            s = c.sizing
            out.line(f"[bold]{c.cloud} {c.instance_type}[/] · {keep(f'{c.nodes} x {c.gpu_count:g} {c.gpu}')} · "
                     f"{keep(f'{c.replicas} replica' + ('s' if c.replicas != 1 else '') + f' x TP{c.gpus_per_replica}')}", f"{i}".ljust(3), "   ")
            ttft = "queue grows" if s.ttft_ms is None else fig(s.ttft_ms, "ms", ",.0f")
            cost = ("price on request" if c.cost_per_month_cny is None else
                    keep(f"¥{c.cost_per_month_cny:,.0f}/month {c.billing}"))
            per = ("" if c.cny_per_million_output_tokens is None else
                   " · " + keep(f"¥{c.cny_per_million_output_tokens:,.2f} per 1M output tokens"))
            out.line(f"{fig(s.output_tokens_per_s, 'output tok/s', ',.0f')} · TTFT {ttft} · TPOT "
                     f"{fig(s.tpot_ms, 'ms', '.1f')} · {cost}{per}", "   ")
    if p.candidates:
        out.raw(p.candidates[0].launch.vllm)
        out.line(f"[dim]{p.candidates[0].launch.replicas_note}[/]")
    notes(out, "[dim]assumes[/]", list(p.assumptions))
    out.line(f"[dim]{len(p.rejected)} instances rejected (see --json for reasons)[/]")
