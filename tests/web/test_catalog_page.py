"""The page's catalog view (issue #29 item 3) without a browser: its filters are the catalog query's fields
(service/planner/catalog_view.py), with the query's own choices, every label in both languages."""

from __future__ import annotations

import re
from typing import get_args

import pytest

from service.catalog.schema import Cloud, SaleStatus
from service.planner.catalog_view import BILLINGS, SORTS, CatalogQuery
from service.web import STATIC_DIR

PAGE = (STATIC_DIR / "index.html").read_text(encoding="utf-8") if STATIC_DIR.is_dir() else ""


def panel() -> str:
    start = PAGE.index('<section id="panel-catalog"')
    return PAGE[start:PAGE.index("</section>", start)]


def strings(lang: str) -> set[str]:
    """The keys of one language's table in i18n.js."""
    text = (STATIC_DIR / "js" / "i18n.js").read_text(encoding="utf-8")
    zh, en = text.index("  zh: {"), text.index("  en: {")
    block = text[zh:en] if lang == "zh" else text[en:text.index("\n};", en)]
    return set(re.findall(r"(?:^|[\s,{])(\w+): [\"`]", block, re.MULTILINE))


def options(name: str) -> list[str]:
    select = re.search(rf'<select id="[^"]+" name="{name}">(.*?)</select>', panel(), re.DOTALL)
    assert select, name
    return re.findall(r'<option value="([^"]*)"', select.group(1))


def test_the_filters_are_the_catalog_query() -> None:
    names = set(re.findall(r'name="(\w+)"', panel()))
    # every filter but FP8 (not asked of the page) and nothing the API would not take
    assert names == set(CatalogQuery.model_fields) - {"fp8"}


@pytest.mark.parametrize(("name", "choices"), [
    ("cloud", ["", *get_args(Cloud)]),  # "" = both clouds
    ("billing", ["", *BILLINGS]),  # "" = any billing rule
    ("sort", ["price-per-gpu", "price-per-tflops", "price"]),  # the API's default first
    ("rdma", ["", "true", "false"]),
])
def test_each_choice_is_one_the_query_takes(name: str, choices: list[str]) -> None:
    assert options(name) == choices
    if name == "sort":
        assert set(choices) == set(SORTS) and CatalogQuery().sort == choices[0]


def test_every_label_of_the_view_is_in_both_languages() -> None:
    view = (STATIC_DIR / "js" / "catalog-view.js").read_text(encoding="utf-8")
    keys = set(re.findall(r'data-i18n="(\w+)"', panel())) | set(re.findall(r'\bt\("(\w+)"', view))
    keys |= set(re.findall(r'"(c[A-Z]\w+|s(?:Per\w+|Price))"', view))  # the column heads and sort labels
    keys |= {f"sale_{s}" for s in get_args(SaleStatus)}  # t(`sale_${r.sale_status}`)
    zh, en = strings("zh"), strings("en")
    assert keys and keys - zh == set() and keys - en == set()


def test_the_tab_is_wired() -> None:
    main = (STATIC_DIR / "js" / "main.js").read_text(encoding="utf-8")
    assert 'from "./catalog-view.js"' in main and "setUpCatalog(" in main
    assert 'aria-controls="panel-catalog"' in PAGE
