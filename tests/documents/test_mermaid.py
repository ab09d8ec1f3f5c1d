"""The decision-path diagram: one branch per cloud pick, every label quoted and escaped."""

from __future__ import annotations

import re
from typing import Any

import pytest

from service.documents import fmt
from service.documents.mermaid import escape_label, render_decision_mermaid

from .conftest import pick

LABEL = re.compile(r'(?:\[|\{)"(.*?)"(?:\]|\})')


@pytest.mark.parametrize("text, expected", [
    ('say "hi"', "say #quot;hi#quot;"),  # quotes would end the label
    ("a [b] {c} (d)", "a #91;b#93; #123;c#125; #40;d#41;"),  # brackets are node-shape syntax
    ("x|y <z> #1", "x#124;y #lt;z#gt; #35;1"),  # pipes, angle brackets, and '#' itself
    ("two\nlines", "two<br/>lines"),  # newlines become line breaks
])
def test_escape_label(text: str, expected: str) -> None:
    assert escape_label(text) == expected


@pytest.mark.parametrize("plan_name", ["qwen_lora", "llama70_full", "t4_qlora"])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_diagram_has_a_branch_per_pick(plan_name: str, lang: str, plans: dict[str, Any]) -> None:
    p = plans[plan_name]
    src = render_decision_mermaid(p, lang)  # type: ignore[arg-type]
    assert src.startswith("flowchart TD\n")
    for cloud in p["picks"]:
        c = pick(p, cloud)
        assert c["instance_type"] in src and fmt.cny(c["total_cost_cny"]) in src
        assert f"{c['memory']['per_gpu_gib']:.2f} GiB" in src
    assert src.count("method --> ") == len(p["picks"])
    for line in src.splitlines()[1:]:
        labels = LABEL.findall(line)
        assert labels, line
        assert all('"' not in x and "[" not in x and "]" not in x for x in labels), line


def test_labels_with_syntax_characters_stay_escaped(plans: dict[str, Any]) -> None:
    """A model name like this is refused before any document (tests/documents/test_hostile_names.py); the labels
    that may still hold such characters (instance types, notes) are escaped."""
    p = plans["qwen_lora"]
    pick = p["picks"]["tencent"]
    odd = {**p, "candidates": [{**c, "instance_type": 'My "GT4" [v2] {x}'} if c["instance_type"] == pick else c
                               for c in p["candidates"]], "picks": {**p["picks"], "tencent": 'My "GT4" [v2] {x}'}}
    src = render_decision_mermaid(odd, "en")
    assert 'My #quot;GT4#quot; #91;v2#93; #123;x#125;' in src
