"""On an 80-100 column terminal the CLI's tables show every instance name whole (the other columns fold).

Regression: at 90 columns the plan table cut instance names to `GT4.8X…` and `HCCPNV…`, so they could be neither
read nor copied."""

from __future__ import annotations

import io
import re
from collections.abc import Callable

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from service.cli import render

pytestmark = [pytest.mark.slow]

ADDRESS = re.compile(r"https://|knowledge/sources\.md")
COMMANDS = [
    ["plan", "Qwen2-7B", "--samples", "100000"],
    ["plan-serving", "--model", "Qwen2.5-7B"],
    ["catalog", "list"],
]


@pytest.fixture
def narrow(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], io.StringIO]:
    def at(width: int) -> io.StringIO:
        out = io.StringIO()
        monkeypatch.setattr(render, "_console", lambda: Console(width=width, file=out, color_system=None))
        return out

    return at


@pytest.mark.parametrize("width", [80, 90, 100])
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0] if a[0] != "catalog" else "catalog-list")
def test_instance_names_are_never_cut(app: typer.Typer, narrow: Callable[[int], io.StringIO], width: int,
                                      args: list[str]) -> None:
    out = narrow(width)
    json_out = CliRunner().invoke(app, [*args, "--json"])
    assert json_out.exit_code == 0, json_out.output
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    table = out.getvalue()
    lines = table.splitlines()
    # a source address under the catalog's table is printed whole, one a line, so that a terminal keeps it
    # clickable (the terminal wraps it, never the program); everything else fits the width
    assert max(len(line) for line in lines if not ADDRESS.search(line)) <= width
    names = set(_instance_names(json_out.output))
    tokens = {tok.rstrip("…") for line in lines for tok in line.split()}
    whole = tokens & names
    cut = {tok for tok in tokens - names if len(tok) >= 4 and any(n.startswith(tok) for n in names)}
    assert len(whole) >= 3 and not cut, (sorted(cut), table[:3000])


def _instance_names(json_text: str) -> list[str]:
    import json
    import re

    start = json_text.find("{") if json_text.lstrip().startswith("{") else json_text.find("[")
    data = json.loads(json_text[start:])
    found = re.findall(r'"instance_type": "([^"]+)"', json.dumps(data))
    return list(dict.fromkeys(found))
