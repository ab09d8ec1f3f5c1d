"""CLI commands for the knowledge index: `index`, `search`, `eval-retrieval`. Wire with `register(app)`.

Thin: they parse options, call ingest / Retriever / evaluate, and render. Errors print message and fix, exit 1.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Literal

import typer

from service.errors import AdvisorError


@contextmanager
def _user_errors() -> Iterator[None]:
    try:
        yield
    except AdvisorError as exc:
        from rich.console import Console

        err = Console(stderr=True)
        err.print(f"[red]error:[/red] {exc.message}", markup=True, highlight=False)
        if exc.fix:
            err.print(f"fix: {exc.fix}", markup=False, highlight=False)
        raise typer.Exit(1) from exc


def index(
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Drop the vector index and embed everything again.")] = False,
) -> None:
    """Build or refresh the knowledge index (guide + catalog documents): only changed chunks are re-embedded."""
    from rich.console import Console

    from service.retrieval.config import RetrievalConfig
    from service.retrieval.dense import DenseIndex
    from service.retrieval.embedder_choice import shared_embedder
    from service.retrieval.ingest import build_index
    from service.retrieval.progress import ConsoleProgress

    with _user_errors():
        config = RetrievalConfig.from_settings()
        embedder = shared_embedder(config.embedding_model)
        dense = DenseIndex(config, embedder)
        report = build_index(config, rebuild=rebuild, progress=ConsoleProgress(), dense=dense)
    Console().print(
        f"Indexed {report.total} chunks with {embedder.model_id} into {dense.describe()['store']}: added {report.added}, updated {report.updated}, "
        f"deleted {report.deleted}, unchanged {report.unchanged}"
        f"{' (full rebuild: embedding model changed)' if report.rebuilt and not rebuild else ''} "
        f"in {report.seconds:.2f} s.",
        highlight=False,
        soft_wrap=True,
    )


def search(
    questions: Annotated[list[str], typer.Argument(help="One or more questions, Chinese or English.")],
    k: Annotated[int, typer.Option("-k", "--k", min=1, max=50, help="Passages per question.")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list, one entry per question.")] = False,
    lang: Annotated[str | None, typer.Option(help="Only passages in this language: zh or en.")] = None,
    cloud: Annotated[str | None, typer.Option(help="Only passages for this cloud (tencent, jdcloud) or general.")] = None,
    topic: Annotated[str | None, typer.Option(help="Only passages with this topic tag.")] = None,
    mode: Annotated[
        Literal["hybrid", "dense", "bm25"],
        typer.Option(help="hybrid (dense + BM25 fused), or dense / bm25 alone (to measure each retriever)."),
    ] = "hybrid",
) -> None:
    """Search the guide and the catalog (hybrid dense + BM25); refreshes the index first when it is stale."""
    from rich.console import Console

    from service.retrieval.hybrid import Retriever, detect_lang
    from service.retrieval.progress import ConsoleProgress

    if lang not in (None, "zh", "en"):
        raise typer.BadParameter("use zh or en", param_hint="--lang")
    with _user_errors():
        retriever = Retriever(progress=ConsoleProgress() if mode != "bm25" else None)
        results = retriever.search_many(questions, k=k, lang=lang, cloud=cloud, topic=topic, mode=mode)
    err = Console(stderr=True)
    for warning in retriever.warnings:
        err.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)
    if as_json:
        payload = [
            {"question": q, "lang": detect_lang(q), "passages": [p.to_dict() for p in passages]}
            for q, passages in zip(questions, results, strict=True)
        ]
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    out = Console()
    for q, passages in zip(questions, results, strict=True):
        out.print(f"\n[bold]{q}[/bold]", highlight=False)
        if not passages:
            out.print("  no passage found")
        for n, p in enumerate(passages, start=1):
            excerpt = " ".join(p.text.split("\n\n", 1)[-1].split())[:160]
            out.print(
                f"  {n}. {p.id}  [dim]score {p.score:.4f} dense {p.dense_rank} bm25 {p.bm25_rank}[/dim]\n"
                f"     {excerpt}\n     [dim]cite: {p.ref}[/dim]",
                highlight=False,
            )


def eval_retrieval(
    as_json: Annotated[bool, typer.Option("--json", help="Print the metrics as JSON.")] = False,
    file: Annotated[Path | None, typer.Option(help="Eval dataset (default evals/retrieval.yaml).")] = None,
    any_lang: Annotated[
        bool, typer.Option("--any-lang", help="Search all languages instead of the question's own.")
    ] = False,
) -> None:
    """Recall@1/3/5 and MRR of dense-only, BM25-only and hybrid retrieval on the retrieval eval set."""
    from rich.console import Console
    from rich.table import Table

    from service.retrieval.evaluate import DEFAULT_EVAL_FILE, evaluate, load_cases
    from service.retrieval.hybrid import Retriever
    from service.retrieval.progress import ConsoleProgress

    with _user_errors():
        cases = load_cases(file or DEFAULT_EVAL_FILE)
        retriever = Retriever(progress=ConsoleProgress())
        report = evaluate(retriever, cases, same_lang=not any_lang)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
        return
    table = Table(title=f"Retrieval eval ({len(cases)} questions)")
    for col in ("retriever", "lang", "n", "R@1", "R@3", "R@5", "MRR@10"):
        table.add_column(col, justify="right" if col not in ("retriever", "lang") else "left")
    for mode, by_lang in report.results.items():
        for lang, m in by_lang.items():
            table.add_row(mode, lang, str(m.n), *(f"{x:.3f}" for x in (m.recall_at_1, m.recall_at_3, m.recall_at_5, m.mrr)))
    out = Console()
    out.print(table)
    for warning in retriever.warnings:
        out.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)
    if report.missing_gold:
        out.print(f"[yellow]gold ids not in the index:[/yellow] {', '.join(report.missing_gold)}", highlight=False)
    for miss in report.misses:
        out.print(
            f"hybrid miss {miss['id']}: {miss['question']} → rank {miss['rank']}, top {miss['top'][:2]}",
            highlight=False,
            soft_wrap=True,
        )


COMMANDS: dict[str, Callable[..., None]] = {"index": index, "search": search, "eval-retrieval": eval_retrieval}


def register(app: typer.Typer) -> None:
    """Add `index`, `search` and `eval-retrieval` to the CLI app."""
    for name, fn in COMMANDS.items():
        app.command(name)(fn)
