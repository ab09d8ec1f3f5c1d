"""service/documents/safe.py: the model-id rule and the quoting per format, on a table with a reason per row."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from service.catalog.loader import Catalog
from service.documents import safe
from service.settings import REPO_ROOT

ACCEPTED = [
    "Qwen2-7B",  # a catalog id
    "Qwen/Qwen2-7B",  # a Hugging Face repo id
    "01-ai/Yi-6B",  # an owner starting with a digit
    "Shanghai_AI_Laboratory/internlm2-7b",  # ModelScope's underscores
    "modelscope/Llama-2-7b-ms",  # a ModelScope id
    "/data/models/qwen2.5-7b",  # an absolute local path (model_name_or_path takes one)
    "_private/m-7B",  # a segment may start with an underscore
    "a" * 128,  # the longest allowed
]
REFUSED = [
    "",  # empty
    "a" * 129,  # too long
    "x$(id)-7B",  # command substitution
    "x`id`-7B",  # backticks
    "x;id",  # a second command
    "Qwen 7B",  # a space
    "Qwen2-7B\nkey: 1",  # a line break
    "Qwen2-7B\t",  # a tab
    "'quoted'",  # quotes
    "{{ summary }}",  # a template placeholder
    "通义千问-7B",  # non-ASCII letters
    "Qwen2\u202e-7B",  # a right-to-left override
    "../etc/passwd",  # a parent-directory segment
    "a//b",  # an empty segment
    "a/",  # a trailing slash
    ".hidden/x",  # a hidden file
    "-rf",  # an option
    "a/-x",  # an option after a slash
    "x~1",  # home expansion
    "x*",  # a glob
]


@pytest.mark.parametrize("value", ACCEPTED)
def test_plausible_model_ids(value: str) -> None:
    assert safe.model_id(value) == value


@pytest.mark.parametrize("value", REFUSED)
def test_implausible_model_ids_are_refused_naming_the_field(value: str) -> None:
    with pytest.raises(safe.UnsafeValueError) as caught:
        safe.model_id(value, "workload.model")
    assert caught.value.message.startswith("workload.model: ") and caught.value.fix
    assert "\n" not in caught.value.message and caught.value.at("x").field == "x.workload.model"


def test_every_catalog_model_passes(catalog: Catalog) -> None:
    assert [m.id for m in catalog.models if not safe.plausible_model_id(m.id)] == []
    bad_names = []
    for m in catalog.models:
        try:
            safe.display_name(m.name)
        except safe.UnsafeValueError:
            bad_names.append(m.name)
    assert bad_names == []


def test_every_modelscope_row_passes() -> None:
    rows = yaml.safe_load((REPO_ROOT / "knowledge" / "modelscope.yaml").read_text())["models"]
    assert all(safe.plausible_model_id(r["hf"]) and safe.plausible_model_id(r["modelscope"]) for r in rows)


@pytest.mark.parametrize("value", ["plain", "it's", 'a "b" $(id) `id` ; & | > <', "x\ny", "", "模型"])
def test_sh_gives_back_the_value_as_one_word(value: str) -> None:
    out = subprocess.run(["bash", "-c", f"printf %s {safe.sh(value)}"], capture_output=True, text=True)
    assert out.stdout == value


def test_comment_is_one_line_without_invisible_controls() -> None:
    assert safe.comment("a\nb\r\x00c\u202ed\u2028e") == "a b c d e"


def test_md_escapes_markup() -> None:
    assert safe.md("**b** _i_ `c` [l](u) <h> # x\ny") == "\\*\\*b\\*\\* \\_i\\_ \\`c\\` \\[l\\](u) \\<h\\> \\# x y"
