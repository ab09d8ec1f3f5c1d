"""Families the clouds' own documents name (knowledge/catalog/families.csv, issue 39): Tencent's TKE node models
(updated 2025-12-10) list PNV5, PNV5i, GC49 and GC49d, which no source sizes: they are shown by name, with their GPU
unknown, never guessed; the same page is the official evidence that PNV5b and PNV6 exist."""

from __future__ import annotations

from typing import Any

import pytest

from service.catalog.loader import Catalog
from service.planner.questions.catalog import catalog_answer

TKE_NODE = "https://www.tencentcloud.com/document/product/457/54485"


def test_the_tke_node_models_are_families_with_their_official_source(catalog: Catalog) -> None:
    named = {f.family: f for f in catalog.families}
    for fam in ("PNV5", "PNV5i", "GC49", "GC49d"):
        f = named[fam]
        assert f.cloud == "tencent" and f.source == TKE_NODE and f.confidence == "official"
        assert f.gpu == "" and "unverified" in f.note and "未经证实" in f.note_zh  # unknown, never guessed
        assert not [r for r in catalog.instances if r.family == fam]  # no size is invented for it
    for fam, gpu in (("PNV5b", "L20"), ("PNV6", "H20")):  # official evidence that they exist
        assert named[fam].source == TKE_NODE and named[fam].gpu == gpu
        assert [r for r in catalog.instances if r.family == fam]


@pytest.mark.parametrize("family", ["PNV5", "pnv5i", "GC49d"])
def test_a_family_named_only_is_answered_from_its_row(catalog: Catalog, family: str) -> None:
    out: dict[str, Any] = catalog_answer(catalog, "family", family=family)
    assert out["answer"] == "named_only" and out["rows"] == []
    assert out["family_info"]["family"].lower() == family.lower() and out["family_info"]["source"] == TKE_NODE


def test_a_family_nobody_names_is_still_refused(catalog: Catalog) -> None:
    from service.errors import InvalidInputError

    with pytest.raises(InvalidInputError):
        catalog_answer(catalog, "family", family="HCCPNV4s")  # only in a non-public list: removed (issue 39)
