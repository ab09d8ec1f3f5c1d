"""Every template in prompts/documents/ renders from a real plan with no placeholder left; the loader is strict."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from service.catalog.loader import Catalog
from service.documents.bundle import build_launch_bundle
from service.documents.errors import TemplateError
from service.documents.request import render_request_markdown
from service.documents.templates import LEFTOVER, available_templates, load_template, render_template

Render = Callable[[dict[str, Any], Catalog], str]

# template file -> how a real plan reaches it
RENDERERS: dict[str, Render] = {
    "request.zh.md": lambda p, cat: render_request_markdown(p, "zh", catalog=cat),
    "request.en.md": lambda p, cat: render_request_markdown(p, "en", catalog=cat),
    "bundle_readme.zh.md": lambda p, cat: build_launch_bundle(p, cat, "zh").files["README.md"],
    "bundle_readme.en.md": lambda p, cat: build_launch_bundle(p, cat, "en").files["README.md"],
    "launch.sh": lambda p, cat: build_launch_bundle(p, cat, "en").files["launch.sh"],
    "monitor.sh": lambda p, cat: build_launch_bundle(p, cat, "en").files["monitor.sh"],
}


def test_every_template_has_a_renderer() -> None:
    assert set(available_templates()) == set(RENDERERS)


@pytest.mark.parametrize("name", sorted(RENDERERS))
@pytest.mark.parametrize("plan_name", ["qwen_lora", "llama70_full", "t4_qlora"])
def test_template_renders_without_leftover_placeholders(name: str, plan_name: str, plans: dict[str, Any],
                                                        catalog: Catalog) -> None:
    placeholders = load_template(name).get_identifiers()
    assert placeholders, f"{name} has no placeholder"
    out = RENDERERS[name](plans[plan_name], catalog)
    assert not LEFTOVER.search(out), LEFTOVER.search(out)
    assert "{{" not in out


def test_missing_template_names_the_file_and_the_known_ones(tmp_path: Path) -> None:
    (tmp_path / "request.zh.md").write_text("# {{ title }}\n", encoding="utf-8")
    with pytest.raises(TemplateError) as err:
        load_template("request.fr.md", tmp_path)
    assert "request.fr.md" in err.value.message and "request.zh.md" in err.value.fix


@pytest.mark.parametrize("values, expected", [
    ({}, "no value for title"),  # a placeholder without a value
    ({"title": "x", "extra": "y"}, "no placeholder for extra"),  # a value the template does not use
])
def test_render_is_strict_both_ways(tmp_path: Path, values: dict[str, str], expected: str) -> None:
    (tmp_path / "t.md").write_text("# {{ title }}\n", encoding="utf-8")
    with pytest.raises(TemplateError, match=expected):
        render_template("t.md", values, tmp_path)


def test_malformed_placeholder_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "bad.md").write_text("# {{ Not-A-Name }}\n", encoding="utf-8")
    with pytest.raises(TemplateError, match="malformed"):
        load_template("bad.md", tmp_path)


def test_shell_and_markdown_dollars_stay_literal(tmp_path: Path) -> None:
    (tmp_path / "s.sh").write_text('echo "${HOME}" $PATH {{ x }} {{{{ y\n', encoding="utf-8")
    assert render_template("s.sh", {"x": "1"}, tmp_path) == 'echo "${HOME}" $PATH 1 {{ y\n'
