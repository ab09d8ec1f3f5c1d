"""`gpu-advisor eval`: the scenario suite against the rule engine's ground truth, plus the sizing anchors and the
retrieval eval, written as Markdown and HTML reports. Registered by service.cli.extras; imports lazily."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from service.cli.common import emit_json, guarded

Backend = Literal["offline", "openai"]
RetrieverKind = Literal["hybrid", "bm25"]


def _progress(n: int, total: int, result: Any) -> None:
    mark = "ok  " if result.passed else "FAIL"
    typer.echo(f"[{n:>3}/{total}] {mark} {result.id}", err=True)


def register(app: typer.Typer) -> None:
    @app.command("eval")
    @guarded
    def eval_cmd(
        backend: Annotated[Backend, typer.Option(help="the in-process assistant's model")] = "offline",
        base_url: Annotated[str | None, typer.Option("--base-url", help="ask a running API, e.g. "
                                                     "http://127.0.0.1:8000")] = None,
        api_key: Annotated[str | None, typer.Option("--api-key", help="API key for --base-url (default: "
                                                    "GPU_ADVISOR_API_KEY)")] = None,
        json_out: Annotated[bool, typer.Option("--json", help="print the results as JSON")] = False,
        out: Annotated[Path | None, typer.Option("--out", help="report directory (default "
                                                 "evals/reports/<timestamp>/)")] = None,
        limit: Annotated[int | None, typer.Option("--limit", min=1, help="ask only the first N scenarios")] = None,
        only: Annotated[list[str] | None, typer.Option("--only", help="scenario id or tag (repeatable)")] = None,
        scenarios: Annotated[Path | None, typer.Option("--scenarios", help="scenario file")] = None,
        retriever: Annotated[RetrieverKind, typer.Option(help="in-process knowledge search; bm25 loads no "
                                                         "embedding model")] = "hybrid",
        anchors: Annotated[bool, typer.Option("--anchors/--no-anchors", help="evaluate the sizing anchors")] = True,
        retrieval: Annotated[bool, typer.Option("--retrieval/--no-retrieval", help="fold in the retrieval "
                                                "eval")] = True,
        judge: Annotated[bool, typer.Option("--judge", help="LLM judge of the prose (needs "
                                            "GPU_ADVISOR_LLM=openai)")] = False,
        history_on: Annotated[bool, typer.Option("--history/--no-history", help="compare with the previous run "
                                                 "and append this one to the history file")] = True,
        history_file: Annotated[Path | None, typer.Option("--history-file", help="default "
                                                          "evals/reports/history.jsonl")] = None,
        fail_under: Annotated[float | None, typer.Option("--fail-under", min=0, max=1, help="exit 1 when slot "
                                                         "accuracy or config match is below this")] = None,
        feedback_data_dir: Annotated[Path | None, typer.Option("--feedback-data-dir", help="count people's 👍/👎 "
                                                               "per question type from this deployment's session "
                                                               "store (or DATABASE_URL's)")] = None,
    ) -> None:
        """Score the assistant's answers against the rule engine's ground truth (evals/scenarios.yaml)."""
        from service.evals.anchors import DEFAULT_ANCHORS
        from service.evals.dataset import DEFAULT_SCENARIOS
        from service.evals.reports import default_out_dir, write_reports
        from service.evals.runner import DEFAULT_HISTORY, RunOptions, run_eval
        from service.settings import get_settings

        settings = get_settings()
        options = RunOptions(
            scenarios_file=scenarios or DEFAULT_SCENARIOS, only=tuple(only or ()), limit=limit,
            backend=backend, base_url=base_url, api_key=settings.api_key if api_key is None else api_key,
            retriever=retriever, anchors_file=DEFAULT_ANCHORS if anchors else None,
            retrieval=retrieval, judge=judge, history_file=(history_file or DEFAULT_HISTORY) if history_on else None,
        )
        feedback = None
        if feedback_data_dir is not None:  # read first: a wrong dir fails before the run, not after it
            from service.evals.feedback import feedback_counts

            feedback = feedback_counts(feedback_data_dir, settings.database_url)
        run = run_eval(options, settings, progress=_progress)
        paths = write_reports(run, out or default_out_dir(run), options.history_file, feedback)
        if json_out:
            emit_json(run.to_dict())
        else:
            _print_summary(run.to_dict(), paths)
        m = run.metrics
        if fail_under is not None and min(m["slot_accuracy"] or 0.0, m["config_match"] or 0.0) < fail_under:
            typer.echo(f"slot accuracy {m['slot_accuracy']} / config match {m['config_match']} under {fail_under}",
                       err=True)
            raise typer.Exit(1)


    @app.command("eval-questions")
    @guarded
    def eval_questions_cmd(
        split: Annotated[Literal["working", "test", "both"], typer.Option(help="which split to ask")] = "both",
        json_out: Annotated[bool, typer.Option("--json", help="print the results as JSON")] = False,
        out: Annotated[Path | None, typer.Option("--out", help="write report.md (and results.json) here")] = None,
        reveal_test: Annotated[bool, typer.Option("--reveal-test", help="also print the frozen test split's "
                                                  "misses (never while changing the reader)")] = False,
        base_url: Annotated[str | None, typer.Option("--base-url", help="ask a running API instead (its own "
                                                     "reader; --reader is for the in-process assistant)")] = None,
        readers: Annotated[list[str] | None, typer.Option(
            "--reader", help="who reads each question (repeat it to report readers side by side): offline; llm (one "
            "structured-output call to GPU_ADVISOR_LLM_BASE_URL / GPU_ADVISOR_LLM_MODEL; the offline reader stands "
            "in, counted as fallback, when it cannot); stored (the frames an LLM wrote for each message, "
            "evals/questions/frames, served by a stand-in provider on 127.0.0.1); gold (the same with each "
            "question's label applied: the answer layer's ceiling)")] = None,
        limit: Annotated[int | None, typer.Option("--limit", min=1, help="ask only the first N of each "
                                                  "split")] = None,
    ) -> None:
        """Ask the real questions of evals/questions and score type, verdict and slots, both splits side by side."""
        import json

        from service.evals.questions.readers import READERS, reader_target
        from service.evals.questions.report import render_markdown, render_readers
        from service.evals.questions.run import run_questions
        from service.evals.runner import load_eval_catalog
        from service.evals.targets import HttpTarget
        from service.settings import get_settings

        chosen = readers or ["offline"]
        unknown = [r for r in chosen if r not in READERS]
        if unknown:
            raise typer.BadParameter(f"unknown reader {unknown[0]!r}; one of {', '.join(READERS)}",
                                     param_hint="--reader")
        settings = get_settings()
        catalog = load_eval_catalog(settings)
        splits: tuple[Any, ...] = ("working", "test") if split == "both" else (split,)
        runs: dict[str, dict[str, Any]] = {}
        for reader in chosen:
            if base_url:
                target = HttpTarget(base_url, settings.api_key)
                try:
                    runs[reader] = run_questions(target, catalog, splits, limit=limit)
                finally:
                    target.close()
                break
            with reader_target(settings, catalog, reader, splits) as t:  # type: ignore[arg-type]
                runs[reader] = run_questions(t, catalog, splits, limit=limit)
        data: dict[str, Any] = runs[chosen[0]] if len(runs) == 1 else {"splits": {f"{r}:{s}": v for r, d in runs.items()
                                                                  for s, v in d["splits"].items()},
                                                       "outcomes": [{**o, "reader": r} for r, d in runs.items()
                                                                    for o in d["outcomes"]]}
        md = render_markdown(runs[chosen[0]], reveal_test) if len(runs) == 1 else render_readers(runs, reveal_test)
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            (out / "report.md").write_text(md, encoding="utf-8")
            shown = [o for o in data["outcomes"] if o["split"] == "working" or reveal_test]
            (out / "results.json").write_text(json.dumps({**data, "outcomes": shown}, ensure_ascii=False, indent=1),
                                              encoding="utf-8")
        if json_out:
            emit_json({"splits": data["splits"]})
        else:
            typer.echo(md)


def _print_summary(data: dict[str, Any], paths: dict[str, Path]) -> None:
    from rich.console import Console
    from rich.table import Table

    from service.evals.metrics import EXTRA, HEADLINE
    from service.evals.report_md import LABELS, fmt

    m = data["metrics"]
    table = Table(title=f"Eval: {data['n_scenarios']} scenarios on {data['run']['target']}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key in HEADLINE + EXTRA:
        table.add_row(LABELS[key], fmt(m.get(key)))
    table.add_row("latency p50 / p95 (s)", f"{fmt(m.get('latency_p50_s'))} / {fmt(m.get('latency_p95_s'))}")
    con = Console()
    con.print(table)
    reg = data.get("regressions") or {}
    if reg.get("regressed"):
        con.print(f"[red]Regressions since {reg['previous_run']}: {', '.join(reg['newly_failing']) or 'metrics'}[/]")
    for note in data["run"]["notes"]:
        con.print(f"[dim]{note}[/]")
    con.print(f"Reports: {paths['markdown']}  {paths['html']}")
