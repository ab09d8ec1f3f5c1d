"""`gpu-advisor catalog list|show|validate` (and `sync`, registered by the sync module)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from service.cli.common import emit_json, fail, guarded, load
from service.planner.catalog_view import instance_dict


def build_catalog_app() -> typer.Typer:
    cat_app = typer.Typer(no_args_is_help=True)

    @cat_app.command("list")
    @guarded
    def list_(
        cloud: Annotated[str | None, typer.Option(help="tencent | jdcloud")] = None,
        gpu: Annotated[str | None, typer.Option(help="GPU name, e.g. A100")] = None,
        prices: Annotated[Path | None, typer.Option()] = None,
        json_out: Annotated[bool, typer.Option("--json")] = False,
    ) -> None:
        """Instances with their prices; each price with its source, date and confidence."""
        from service.catalog.queries import instances_for, prices_for, resolve_gpu
        from service.cli.render import print_instances

        cat = load(prices)
        if cloud is not None and cloud not in ("tencent", "jdcloud"):
            fail(f"Unknown cloud '{cloud}'. Use --cloud tencent or --cloud jdcloud.")
        gpu_ids: set[str] = set()
        if gpu:
            g, _ = resolve_gpu(gpu, cat.gpus)
            stem = g.id.split("-")[0]
            gpu_ids = {x.id for x in cat.gpus if x.id.split("-")[0] == stem}
        rows = instances_for(cat.instances, [cloud] if cloud else [], gpu_ids)
        out = [instance_dict(r, list(prices_for(r.instance_type, cat.prices))) for r in rows]
        emit_json(out) if json_out else print_instances(out)

    @cat_app.command()
    @guarded
    def show(
        name: Annotated[str, typer.Argument(help="a GPU (A10, H800) or an instance type (GT4.4XLARGE96)")],
        json_out: Annotated[bool, typer.Option("--json")] = False,
    ) -> None:
        """One GPU's specs (FP8, BF16, NVLink, CUDA) or one instance with its prices."""
        from service.catalog.queries import find_instance, instance_suggestions, prices_for, resolve_gpu
        from service.cli.render import print_mapping
        from service.errors import UnknownGpuError, UnknownNameError

        cat = load()
        inst = find_instance(name, cat.instances)
        if inst is not None:
            out = instance_dict(inst, list(prices_for(inst.instance_type, cat.prices)))
        else:
            try:
                g, note = resolve_gpu(name, cat.gpus)
            except UnknownGpuError as exc:
                raise UnknownNameError("GPU or instance", name,
                                       exc.suggestions + instance_suggestions(name, cat.instances)) from exc
            out = {**g.model_dump(mode="json"), "resolution_note": note or None,
                   "sold_as": sorted(r.instance_type for r in cat.instances if r.gpu == g.id)}
        emit_json(out) if json_out else print_mapping(out)

    @cat_app.command()
    def validate() -> None:
        """Validate every knowledge file; each problem names file, row and field."""
        from service.errors import CatalogError

        try:
            cat = load()
        except CatalogError as exc:
            typer.echo(f"error: {exc.message}\n{exc.fix}", err=True)
            raise typer.Exit(2) from exc
        by_conf: dict[str, int] = {}
        for p in cat.prices:
            by_conf[p.confidence] = by_conf.get(p.confidence, 0) + 1
        per_cloud: dict[str, int] = {}
        for r in cat.instances:
            per_cloud[r.cloud] = per_cloud.get(r.cloud, 0) + 1
        typer.echo(f"ok: {len(cat.gpus)} GPUs, {len(cat.models)} models, instances {per_cloud}, "
                   f"prices {len(cat.prices)} by confidence {by_conf}")

    from service.catalog.sync_cli import register as register_sync  # the SDKs load only when sync runs

    register_sync(cat_app)
    return cat_app
