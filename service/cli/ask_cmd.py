"""`gpu-advisor ask`, `serve`, `run` and free-text `plan`: the assistant from the command line."""

from __future__ import annotations

from typing import Annotated

import typer

from service.cli.common import emit_json, guarded, load
from service.workload import Workload

EXAMPLE = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"


def workload_from_text(text: str) -> Workload:
    """Read a free-text request into the workload schema (the offline planner model's reader)."""
    from service.catalog.queries import gpu_index, model_index
    from service.errors import InvalidInputError
    from service.reader import parse_message

    cat = load()
    parsed = parse_message(text, {k: m.id for k, m in model_index(cat.models).items()},
                           {k: g.id for k, (g, _) in gpu_index(cat.gpus).items()})
    if not parsed.slots.get("model") and not parsed.slots.get("params_b"):
        raise InvalidInputError(f"No model or size found in '{text[:80]}'.",
                                "Name the model (e.g. Qwen2-7B) or its size (e.g. 7B).")
    return Workload.model_validate(parsed.slots)


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def ask(
        message: Annotated[str, typer.Argument(help="a question or a training job, Chinese or English")],
        session: Annotated[str | None, typer.Option("--session", help="continue a session")] = None,
        json_out: Annotated[bool, typer.Option("--json")] = False,
    ) -> None:
        """Ask the assistant (offline planner model by default; GPU_ADVISOR_LLM=openai for an LLM)."""
        from service.assistant.service import build_assistant

        result = build_assistant().ask(message, session)
        if json_out:
            emit_json(result.model_dump())
            return
        from service.cli.markdown_text import print_markdown
        from service.cli.render import output

        out = output()
        print_markdown(out, result.answer_markdown)
        out.line(f"[dim]session {result.session_id} · backend {result.backend}[/]")

    @app.command()
    @guarded
    def serve(
        host: Annotated[str, typer.Option()] = "127.0.0.1",
        port: Annotated[int, typer.Option(min=1, max=65535)] = 8000,
        workers: Annotated[int, typer.Option(min=1, max=64, help="worker processes; more than one needs "
                                             "DATABASE_URL (Postgres), see docs/deploy.md")] = 1,
    ) -> None:
        """Run the chat API (and web page). The port opens at once; the knowledge index loads or builds in the
        background (BM25 search first, then dense: see GET /readyz). Several workers build it once: one holds
        the build lock in the data dir, the others wait and open its result."""
        from service.server import check_workers
        from service.server import serve as run_server
        from service.settings import get_settings

        check_workers(workers, get_settings())
        run_server(host, port, workers=workers)

    @app.command()
    def run(
        host: Annotated[str, typer.Option()] = "127.0.0.1",
        port: Annotated[int, typer.Option(min=1, max=65535)] = 8000,
        example: Annotated[bool, typer.Option("--example/--no-example", help="answer the example first")] = True,
        then_serve: Annotated[bool, typer.Option("--serve/--no-serve", help="then serve")] = True,
    ) -> None:
        """`make run`: answer the guide's example question once, then serve (127.0.0.1:8000 unless told).
        The example needs only the engine (`make run` prints it before installing the chat service)."""
        if example:
            from service.cli.render import print_plan
            from service.planner.plan import plan

            typer.echo(f"Example: {EXAMPLE}")
            print_plan(plan(workload_from_text(EXAMPLE), load()), top=5)
        if not then_serve:
            return
        typer.echo(f"Starting the chat service on http://{host}:{port} (the engine answers at once; the knowledge "
                   "index builds in the background on first start: progress below, status at /readyz).")
        serve(host, port)

