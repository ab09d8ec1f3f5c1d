"""`gpu-advisor catalog list|show|validate` (and `sync`, registered by the sync module)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from service.cli.common import emit_json, guarded, load
from service.planner.catalog_view import instance_row


def build_catalog_app() -> typer.Typer:
    cat_app = typer.Typer(no_args_is_help=True)

    @cat_app.command("list")
    @guarded
    def list_(
        cloud: Annotated[str | None, typer.Option(help="tencent | jdcloud")] = None,
        gpu: Annotated[str | None, typer.Option(help="a GPU family, e.g. A100 (every A100 SKU)")] = None,
        min_memory_gb: Annotated[float | None, typer.Option(help="GPU memory per card, at least N GB")] = None,
        min_cards: Annotated[int | None, typer.Option(help="GPUs per instance, at least K")] = None,
        rdma: Annotated[bool | None, typer.Option("--rdma/--no-rdma", help="only with (without) RDMA")] = None,
        fp8: Annotated[bool | None, typer.Option("--fp8/--no-fp8", help="only GPUs with (without) FP8")] = None,
        billing: Annotated[str | None, typer.Option(help="on_demand | monthly | spot: only instances priced so")] = None,
        sort: Annotated[str, typer.Option(help="price | price-per-gpu (¥/GPU-hour) | price-per-tflops "
                                          "(¥/dense BF16 TFLOPS-hour)")] = "price-per-gpu",
        prices: Annotated[Path | None, typer.Option()] = None,
        json_out: Annotated[bool, typer.Option("--json")] = False,
    ) -> None:
        """Instances with their prices, filtered and sorted; each price with its source, date and confidence."""
        from service.cli.render import print_catalog
        from service.planner.catalog_view import CatalogQuery, catalog_rows

        query = CatalogQuery.model_validate({"cloud": cloud, "gpu": gpu, "min_memory_gb": min_memory_gb,
                                             "min_cards": min_cards, "rdma": rdma, "fp8": fp8, "billing": billing,
                                             "sort": sort})
        rows = catalog_rows(load(prices), query)
        emit_json([r.model_dump(mode="json") for r in rows]) if json_out else print_catalog(rows, query.billing)

    @cat_app.command()
    @guarded
    def show(
        name: Annotated[str, typer.Argument(help="a GPU (A10, H800) or an instance type (GT4.4XLARGE96)")],
        json_out: Annotated[bool, typer.Option("--json")] = False,
    ) -> None:
        """One GPU's specs (FP8, BF16, NVLink, CUDA) or one instance with its prices."""
        from service.catalog.queries import find_instance, instance_suggestions, resolve_gpu
        from service.cli.render import print_mapping
        from service.errors import UnknownGpuError, UnknownNameError

        cat = load()
        inst = find_instance(name, cat.instances)
        if inst is not None:
            out = instance_row(inst, cat).model_dump(mode="json")
            if not json_out:  # each price on its own line: the figure, its date as a reader reads it, its confidence
                from service.cli.render import print_prices

                print_mapping({k: v for k, v in out.items() if k != "prices"})
                print_prices(out["prices"])
                return
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
    def validate(
        prices: Annotated[Path | None, typer.Option(help="also check your own price sheet (CSV with the columns of "
                                                    "knowledge/catalog/prices.csv): each row needs a date, a source "
                                                    "and a price that can be true")] = None,
    ) -> None:
        """Validate every knowledge file; each problem names file, row and field. The shipped prices' provenance too:
        public sources, official prices dated by their own page, estimates dated by their anchor."""
        from service.catalog.loader import load_catalog
        from service.catalog.provenance import (
            price_problems,
            reference_problems,
            source_problems,
            unsized_problems,
        )
        from service.catalog.unsized import UNSIZED_FILE, read_unsized
        from service.errors import CatalogError
        from service.settings import get_settings

        try:
            shipped = load_catalog(get_settings().knowledge_dir)
            cat = load(prices)
        except CatalogError as exc:
            typer.echo(f"error: {exc.message}\n{exc.fix}", err=True)
            raise typer.Exit(2) from exc
        problems = price_problems(shipped.prices) + source_problems(shipped.instances, shipped.billing_rules,
                                                                    shipped.families)
        unsized_file = get_settings().knowledge_dir / UNSIZED_FILE
        unsized = read_unsized(unsized_file) if unsized_file.is_file() else ()
        problems += unsized_problems(unsized, shipped.models) + reference_problems(shipped.reference_prices)
        if problems:
            typer.echo("error: " + "\n".join(problems), err=True)
            raise typer.Exit(2)
        by_conf: dict[str, int] = {}
        for p in cat.prices:
            by_conf[p.confidence] = by_conf.get(p.confidence, 0) + 1
        per_cloud: dict[str, int] = {}
        for r in cat.instances:
            per_cloud[r.cloud] = per_cloud.get(r.cloud, 0) + 1
        typer.echo(f"ok: {len(cat.gpus)} GPUs, {len(cat.models)} models, instances {per_cloud}, "
                   f"prices {len(cat.prices)} by confidence {by_conf}, families {len(cat.families)}, "
                   f"known but not sized {len(unsized)}, other clouds' reference prices {len(cat.reference_prices)}")

    from service.catalog.sync_cli import register as register_sync  # the SDKs load only when sync runs

    register_sync(cat_app)
    return cat_app
