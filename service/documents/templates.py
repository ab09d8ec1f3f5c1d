"""Document templates in prompts/documents/, loaded by file name and filled with `{{ name }}` placeholders.

The syntax is `string.Template` with a `{{ name }}` pattern, so `$VAR` in shell scripts and Markdown stays
literal. Templates hold headings and fixed prose; the code fills whole sections. Rendering is strict both
ways: a placeholder without a value and a value without a placeholder are errors, so the two cannot drift.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from pathlib import Path

from service.documents.errors import TemplateError

SUBDIR = "documents"
LEFTOVER = re.compile(r"\{\{\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\}")


# `{{ name }}`; `{{{{` is an escaped `{{`; `braced` never matches; any other `{{` is invalid.
_PATTERN = r"""
\{\{(?:
  (?P<escaped>\{\{)
| \s*(?P<named>[a-z_][a-z0-9_]*)\s*\}\}
| (?P<braced>(?!))
| (?P<invalid>)
)
"""


class DocTemplate(string.Template):
    """`{{ name }}` placeholders; `{{{{` writes a literal `{{`; anything else after `{{` is an error."""

    delimiter = "{{"
    pattern = _PATTERN  # type: ignore[assignment]  # string.Template compiles a str pattern per subclass


def template_dir(directory: Path | None = None) -> Path:
    if directory is not None:
        return directory
    from service.settings import get_settings

    return get_settings().prompts_dir / SUBDIR


def available_templates(directory: Path | None = None) -> list[str]:
    d = template_dir(directory)
    return sorted(p.name for p in d.iterdir() if p.is_file()) if d.is_dir() else []


def load_template(name: str, directory: Path | None = None) -> DocTemplate:
    """The template file `name` (e.g. "request.zh.md") from prompts/documents/."""
    d = template_dir(directory)
    path = d / name
    if "/" in name or "\\" in name or not path.is_file():
        known = ", ".join(available_templates(d)) or "none"
        raise TemplateError(f"Document template '{name}' not found in {d}.",
                            f"Add {path} or use one of: {known}.")
    tpl = DocTemplate(path.read_text(encoding="utf-8"))
    if not tpl.is_valid():
        raise TemplateError(f"Template {path} has a malformed placeholder.",
                            "Write placeholders as {{ name }} (lowercase letters, digits, underscores).")
    return tpl


def placeholders(name: str, directory: Path | None = None) -> set[str]:
    return set(load_template(name, directory).get_identifiers())


def render_template(name: str, values: Mapping[str, str], directory: Path | None = None) -> str:
    """Fill every placeholder of `name`; missing or unused values raise TemplateError naming them."""
    tpl = load_template(name, directory)
    wanted = set(tpl.get_identifiers())
    missing = sorted(wanted - set(values))
    unused = sorted(set(values) - wanted)
    if missing or unused:
        parts = ([f"no value for {', '.join(missing)}"] if missing else []) + (
            [f"no placeholder for {', '.join(unused)}"] if unused else [])
        raise TemplateError(f"Template '{name}' and its renderer disagree: {'; '.join(parts)}.",
                            "Update the template in prompts/documents/ or the section builder to match.")
    return tpl.substitute(values)
