"""`gpu-advisor calibrate`: measure a few real training steps on this machine and compare with the estimate."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated, Literal

import typer

from service.cli.common import emit_json, guarded, load


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def calibrate(
        model: Annotated[str, typer.Option("--model", help="catalog model name, or a Hugging Face config.json")],
        method: Annotated[Literal["full", "lora", "qlora"], typer.Option("--method")] = "lora",
        gpu_count: Annotated[int, typer.Option("--gpu-count", min=1, help="GPUs (this harness runs on one)")] = 1,
        seq_len: Annotated[int, typer.Option("--seq-len", min=16, max=131072)] = 2048,
        micro_batch: Annotated[int, typer.Option("--micro-batch", min=1, max=256)] = 1,
        steps: Annotated[int, typer.Option("--steps", min=1, max=1000)] = 5,
        lora_rank: Annotated[int, typer.Option("--lora-rank", min=1, max=1024)] = 8,
        grad_ckpt: Annotated[bool, typer.Option("--grad-ckpt/--no-grad-ckpt")] = True,
        save: Annotated[bool, typer.Option("--save", help="add the row to the user calibration file")] = False,
        json_out: Annotated[bool, typer.Option("--json")] = False,
    ) -> None:
        """Train a few steps with random weights (no download) and print measured peak memory and tokens/s next to
        the engine's estimate; --save writes the row to <data dir>/calibration.json, which the engine then applies
        to that GPU."""
        from service.calibration.harness import run_harness, summary
        from service.calibration.store import CalibrationRow, calibration_path, save_row
        from service.catalog.queries import resolve_gpu
        from service.errors import InvalidInputError, UnknownGpuError
        from service.planner.resolve import resolve_model_for
        from service.sizing.types import TrainSetup
        from service.workload import Workload

        if gpu_count != 1:
            raise InvalidInputError("calibrate runs on one GPU in this version.", "Pass --gpu-count 1.")
        import torch

        if save and not torch.cuda.is_available():
            raise InvalidInputError("Nothing to save: no CUDA GPU on this machine (a CPU run only checks the harness).",
                                    "Run calibrate --save on a GPU the catalog lists.")
        cat = load()
        spec, _ = resolve_model_for(Workload(model=model, method=method), cat.models)
        path = Path(model) if model.endswith(".json") and Path(model).is_file() else None
        setup = TrainSetup(method=method, quant_bits=4 if method == "qlora" else None, seq_len=seq_len,
                           micro_batch=micro_batch, grad_ckpt=grad_ckpt, lora_rank=lora_rank)

        def resolve(name: str):  # type: ignore[no-untyped-def]
            try:
                return resolve_gpu(name.replace("NVIDIA ", ""), cat.gpus)[0]
            except (UnknownGpuError, InvalidInputError):
                return None

        m = run_harness(spec, path, setup, steps, cat.gpus, resolve)
        out = summary(m)
        if save:
            if m.gpu is None or m.estimate_tokens_per_s is None or m.estimate_gib is None:
                raise InvalidInputError("Nothing to save: " + (m.note or f"{m.device} is not a catalog GPU") + ".",
                                        "Run calibrate --save on a GPU the catalog lists.")
            row = CalibrationRow(gpu=m.gpu.id, gpu_name=m.device, model=m.spec.name, method=method, seq_len=seq_len,
                                 micro_batch=micro_batch, measured_tokens_per_s=m.tokens_per_s,
                                 estimated_tokens_per_s=m.estimate_tokens_per_s,
                                 measured_max_reserved_gib=m.max_reserved_gib,
                                 measured_max_allocated_gib=m.max_allocated_gib, estimated_gib=m.estimate_gib,
                                 date=date.today().isoformat(), versions=m.versions)
            target = calibration_path()
            out["saved"] = {"file": str(target), "rows": save_row(row, target)}
        if json_out:
            emit_json(out)
            return
        meas, est = out["measured"], out["estimate"]
        typer.echo(f"{out['model']} · {method} · seq {out['seq_len']} × micro-batch {micro_batch} · "
                   f"{steps} steps on {out['device']}")
        typer.echo(f"  tokens/s        measured {meas['tokens_per_s']}   estimate {est['tokens_per_s'] or '—'}")
        typer.echo(f"  peak memory     reserved {meas['max_reserved_gib']} GiB, allocated "
                   f"{meas['max_allocated_gib']} GiB   estimate {est['per_gpu_gib'] or '—'} GiB")
        typer.echo(f"  host peak RSS   {meas['host_peak_rss_gib']} GiB")
        if out["note"]:
            typer.echo(f"  note: {out['note']}")
        if "saved" in out:
            typer.echo(f"  saved to {out['saved']['file']} ({out['saved']['rows']} rows)")
