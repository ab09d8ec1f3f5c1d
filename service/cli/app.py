"""The typer app: estimate, plan, catalog, run, plus the retrieval/assistant/service commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from service.cli.common import emit_json, guarded, load
from service.cli.serving_cmd import (
    ConcOpt,
    EngineOpt,
    FracOpt,
    GpusOpt,
    InOpt,
    KvOpt,
    LenOpt,
    OutOpt,
    RateOpt,
    TpotOpt,
    TtftOpt,
    WeightsOpt,
)
from service.workload import Workload

GpuCount = Annotated[int, typer.Option("--gpus", min=1, max=4096, help="GPUs to shard over")]
# Training settings (unset: the framework's defaults, stated in the answer)
Framework = Annotated[Literal["llamafactory", "ms-swift", "torchtune", "axolotl", "trl"] | None,
                      typer.Option(help="whose defaults fill unset settings (default llamafactory)")]
Precision = Annotated[Literal["amp-bf16", "pure-bf16", "fp16", "fp8"] | None, typer.Option()]
OptimizerOpt = Annotated[Literal["adamw", "adamw-8bit", "paged-adamw-8bit", "adafactor"] | None, typer.Option()]
Checkpointing = Annotated[Literal["none", "selective", "full"] | None,
                          typer.Option("--checkpointing", help="activation checkpointing")]
LoraTargets = Annotated[Literal["qv", "attn", "all-linear"] | None, typer.Option()]
LoraSave = Annotated[list[str] | None, typer.Option("--lora-modules-to-save",
                                                    help="lm_head | embed_tokens, trained in full (repeatable)")]
AttentionOpt = Annotated[Literal["flash", "sdpa", "eager"] | None, typer.Option()]
LossOpt = Annotated[Literal["full-logits", "chunked"] | None, typer.Option()]
KbitUpcast = Annotated[bool | None, typer.Option("--kbit-upcast/--no-kbit-upcast",
                                                 help="QLoRA through prepare_model_for_kbit_training")]
ShardingOpt = Annotated[Literal["deepspeed", "fsdp", "fsdp2"] | None, typer.Option()]


def _settings(framework: str | None, precision: str | None, optimizer: str | None, checkpointing: str | None,
              lora_targets: str | None, lora_modules_to_save: list[str] | None, attention: str | None,
              loss: str | None, kbit_upcast: bool | None, sharding: str | None) -> dict[str, object]:
    """The training-setting flags that were given (unset ones stay out: the framework decides)."""
    given = {"framework": framework, "precision": precision, "optimizer": optimizer,
             "activation_checkpointing": checkpointing, "lora_targets": lora_targets,
             "lora_modules_to_save": lora_modules_to_save or None, "attention": attention, "loss": loss,
             "kbit_upcast": kbit_upcast, "sharding": sharding}
    return {k: v for k, v in given.items() if v is not None}


def _workload(
    model: str | None, method: str, bits: int | None, seq_len: int | None, micro_batch: int | None,
    lora_rank: int | None, grad_ckpt: bool | None, zero: int | None, samples: int | None,
    avg_tokens: int | None, epochs: float | None, tokens: float | None, dataset_gb: float | None = None,
    **extra: object,
) -> Workload:
    from service.errors import InvalidInputError

    if bits is not None and bits not in (4, 8):
        raise InvalidInputError(f"--bits {bits} is not supported.", "QLoRA runs with --bits 4 or --bits 8.")
    params_b = None
    return Workload.model_validate({
        "model": model, "params_b": params_b, "method": method, "quant_bits": bits, "seq_len": seq_len,
        "micro_batch": micro_batch, "lora_rank": lora_rank, "grad_ckpt": grad_ckpt, "zero_stage": zero,
        "samples": samples, "avg_tokens_per_sample": avg_tokens, "epochs": epochs, "tokens": tokens,
        "dataset_gb": dataset_gb, **extra,
    })


Method = Literal["full", "lora", "qlora", "freeze", "pretrain"]


def _only_for(kind: str, wrong: list[str]) -> None:
    """Options of the other kind of plan, named: `plan --kind serving --samples 1000` is a mistake, not ignored."""
    from service.errors import InvalidInputError

    if not wrong:
        return
    flags = ", ".join("TEXT" if n == "text" else "--" + n.replace("_", "-") for n in wrong)
    other = "training" if kind == "serving" else "serving"
    what = f"a {other} option" if len(wrong) == 1 else f"{other} options"
    raise InvalidInputError(f"{flags}: {what}, and this plan is --kind {kind}.",
                            f"Drop {flags}, or plan {other} with --kind {other}.")


def build_app() -> typer.Typer:
    app = typer.Typer(add_completion=False, no_args_is_help=True,
                      help="GPU Advisor: verified GPU cloud configurations for training (Tencent Cloud, JD Cloud).")

    @app.command()
    @guarded
    def estimate(
        model: Annotated[str, typer.Option(help="model name, a size such as 7B, or a config.json path")],
        gpu: Annotated[str, typer.Option(help="GPU, e.g. A100-80G, 4090, T4")],
        method: Annotated[Method, typer.Option()] = "lora",
        bits: Annotated[int | None, typer.Option(help="QLoRA bits: 4 or 8")] = None,
        gpus: GpuCount = 1,
        seq_len: Annotated[int | None, typer.Option()] = None,
        micro_batch: Annotated[int | None, typer.Option()] = None,
        lora_rank: Annotated[int | None, typer.Option()] = None,
        grad_ckpt: Annotated[bool | None, typer.Option("--grad-ckpt/--no-grad-ckpt")] = None,
        zero: Annotated[int | None, typer.Option(min=0, max=3)] = None,
        offload: Annotated[Literal["none", "optimizer", "all"], typer.Option()] = "none",
        framework: Framework = None,
        precision: Precision = None,
        optimizer: OptimizerOpt = None,
        checkpointing: Checkpointing = None,
        lora_targets: LoraTargets = None,
        lora_modules_to_save: LoraSave = None,
        attention: AttentionOpt = None,
        loss: LossOpt = None,
        kbit_upcast: KbitUpcast = None,
        sharding: ShardingOpt = None,
        samples: Annotated[int | None, typer.Option()] = None,
        avg_tokens: Annotated[int | None, typer.Option()] = None,
        epochs: Annotated[float | None, typer.Option()] = None,
        tokens: Annotated[float | None, typer.Option()] = None,
        prices: Annotated[Path | None, typer.Option(help="your own price sheet (prices.csv schema)")] = None,
        json_out: Annotated[bool, typer.Option("--json")] = False,
    ) -> None:
        """Memory, fit, throughput and hours for one model x method x GPU setup."""
        from service.cli.render import print_estimate
        from service.planner.estimate import EstimateRequest
        from service.planner.estimate import estimate as run_estimate

        w = _workload(model, method, bits, seq_len, micro_batch, lora_rank, grad_ckpt, zero, samples,
                      avg_tokens, epochs, tokens, None, **_settings(framework, precision, optimizer, checkpointing,
                                                                    lora_targets, lora_modules_to_save, attention,
                                                                    loss, kbit_upcast, sharding))
        result = run_estimate(EstimateRequest(w, gpu, gpus, offload), load(prices))
        emit_json(result) if json_out else print_estimate(result)

    @app.command()
    @guarded
    def plan(
        text: Annotated[str | None, typer.Argument(help="optional free text, e.g. '用Qwen2-7B做问答微调…'")] = None,
        model: Annotated[str | None, typer.Option()] = None,
        method: Annotated[Method, typer.Option()] = "lora",
        bits: Annotated[int | None, typer.Option()] = None,
        seq_len: Annotated[int | None, typer.Option()] = None,
        micro_batch: Annotated[int | None, typer.Option()] = None,
        lora_rank: Annotated[int | None, typer.Option()] = None,
        grad_ckpt: Annotated[bool | None, typer.Option("--grad-ckpt/--no-grad-ckpt")] = None,
        zero: Annotated[int | None, typer.Option(min=0, max=3)] = None,
        framework: Framework = None,
        precision: Precision = None,
        optimizer: OptimizerOpt = None,
        checkpointing: Checkpointing = None,
        lora_targets: LoraTargets = None,
        lora_modules_to_save: LoraSave = None,
        attention: AttentionOpt = None,
        loss: LossOpt = None,
        kbit_upcast: KbitUpcast = None,
        sharding: ShardingOpt = None,
        samples: Annotated[int | None, typer.Option()] = None,
        avg_tokens: Annotated[int | None, typer.Option()] = None,
        epochs: Annotated[float | None, typer.Option()] = None,
        tokens: Annotated[float | None, typer.Option()] = None,
        dataset_gb: Annotated[float | None, typer.Option()] = None,
        budget_cny: Annotated[float | None, typer.Option()] = None,
        budget_period: Annotated[Literal["month", "total"], typer.Option()] = "month",
        deadline_hours: Annotated[float | None, typer.Option()] = None,
        cloud: Annotated[list[str] | None, typer.Option(help="tencent | jdcloud (repeatable)")] = None,
        billing: Annotated[Literal["on_demand", "monthly", "spot"] | None, typer.Option()] = None,
        objective: Annotated[Literal["cheapest", "fastest", "balanced"], typer.Option()] = "cheapest",
        gpu_include: Annotated[list[str] | None, typer.Option()] = None,
        gpu_exclude: Annotated[list[str] | None, typer.Option()] = None,
        gpu_count: Annotated[int | None, typer.Option(min=1)] = None,
        top: Annotated[int, typer.Option(help="candidates to show")] = 8,
        prices: Annotated[Path | None, typer.Option(help="your own price sheet (prices.csv schema)")] = None,
        json_out: Annotated[bool, typer.Option("--json")] = False,
        kind: Annotated[Literal["training", "serving"], typer.Option(
            help="training, or serving: a model behind an inference engine, sized with the options from --gpu on "
                 "(as `plan-serving`; docs/serving.md)")] = "training",
        gpu: Annotated[str | None, typer.Option("--gpu", help="serving: pin one GPU type")] = None,
        gpus: GpusOpt = None, weights: WeightsOpt | None = None, kv_dtype: KvOpt = "auto", engine: EngineOpt = "vllm",
        mem_fraction: FracOpt = None, max_model_len: LenOpt = None, input_tokens: InOpt = None,
        output_tokens: OutOpt = None, concurrency: ConcOpt = None, request_rate: RateOpt = None,
        ttft_ms: TtftOpt = None, tpot_ms: TpotOpt = None,
        *, ctx: typer.Context,
    ) -> None:
        """Rank every instance on Tencent Cloud and JD Cloud for a training workload (or, with --kind serving, for
        serving a model)."""
        from service.cli.render import print_plan
        from service.cli.serving_cmd import run_serving_plan
        from service.planner.plan import plan as run_plan
        from service.planner.report import training_plan
        from service.settings import get_settings

        serving = {"gpu": gpu, "gpus": gpus, "weights": weights, "kv_dtype": kv_dtype, "engine": engine,
                   "mem_fraction": mem_fraction, "max_model_len": max_model_len, "input_tokens": input_tokens,
                   "output_tokens": output_tokens, "concurrency": concurrency, "request_rate": request_rate,
                   "ttft_ms": ttft_ms, "tpot_ms": tpot_ms}
        shared = {"model", "cloud", "billing", "objective", "budget_cny", "top", "prices", "json_out", "kind"}
        given = [name for name, value in ctx.params.items() if value is not None and name not in shared
                 and getattr(ctx.get_parameter_source(name), "name", "DEFAULT") != "DEFAULT"]  # typed, not defaulted
        _only_for(kind, [n for n in given if (n in serving) != (kind == "serving")])
        if kind == "serving":
            run_serving_plan({**serving, "model": model, "clouds": cloud or None, "billing": billing,
                              "objective": objective, "budget_cny": budget_cny}, top=top, json_out=json_out,
                             prices=prices)
            return
        chosen = _settings(framework, precision, optimizer, checkpointing, lora_targets, lora_modules_to_save,
                           attention, loss, kbit_upcast, sharding)
        if text:
            from service.cli.ask_cmd import workload_from_text

            w = workload_from_text(text)
            if chosen:  # flags state settings the text does not
                w = Workload.model_validate({**w.model_dump(exclude_unset=True), **chosen})
        else:
            w = _workload(model, method, bits, seq_len, micro_batch, lora_rank, grad_ckpt, zero, samples,
                          avg_tokens, epochs, tokens, dataset_gb, budget_cny=budget_cny,
                          budget_period=budget_period, deadline_hours=deadline_hours, clouds=cloud or [],
                          billing=billing, objective=objective, gpu_include=gpu_include or [],
                          gpu_exclude=gpu_exclude or [], gpu_count=gpu_count, **chosen)
        result = run_plan(w, load(prices), max_price_age_days=get_settings().price_max_age_days)
        emit_json(training_plan(result).model_dump(mode="json")) if json_out else print_plan(result, top)

    from service.cli.catalog_cmd import build_catalog_app
    from service.cli.extras import register_extras
    from service.cli.sessions_cmd import build_sessions_app

    app.add_typer(build_catalog_app(), name="catalog", help="List, show and validate the sourced catalog.")
    app.add_typer(build_sessions_app(), name="sessions",
                  help="The session store's upkeep: prune old sessions, move sessions to a rotated API key, stats.")
    register_extras(app)
    return app
