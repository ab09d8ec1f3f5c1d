"""Sources users can open: every catalog source is one public URL (issue 39: a repository path or a key in
sources.md is not a source a user can open); nothing points at internal notes; sources.md lists each source once."""

from __future__ import annotations

import re
from pathlib import Path

from service.catalog.loader import Catalog

KNOWLEDGE = Path(__file__).resolve().parents[2] / "knowledge"
SOURCES_MD = (KNOWLEDGE / "sources.md").read_text(encoding="utf-8")
KEY = re.compile(r"^knowledge/sources\.md#([A-Z0-9-]+)$")


def _all_sources(catalog: Catalog) -> list[tuple[str, str]]:
    return ([(r.instance_type, r.source) for r in catalog.instances]
            + [(f"{p.instance_type} {p.billing}", p.source) for p in catalog.prices]
            + [(f"rule {b.family}", b.source) for b in catalog.billing_rules])


def test_every_row_source_is_a_public_url_listed_in_sources_md(catalog: Catalog) -> None:
    for what, src in _all_sources(catalog):
        assert not KEY.match(src), (what, src)  # our own file is not where a user can check a price
        assert re.fullmatch(r"https?://\S+", src), (what, src)  # one address, no prose
        assert src in SOURCES_MD, (what, src)  # listed once with its title and date


def test_nothing_points_at_internal_notes() -> None:
    for path in [*(KNOWLEDGE / "catalog").iterdir(), KNOWLEDGE / "models.yaml", KNOWLEDGE / "README.md",
                 KNOWLEDGE / "sources.md"]:
        text = path.read_text(encoding="utf-8")
        assert "shared/" not in text, path
        assert not re.search(r"\b(prices|clouds|gpus|sizing)\.md\b", text), path


def test_gpu_sources_name_a_url_or_a_repository_file(catalog: Catalog) -> None:
    openable = re.compile(r"https?://|[\w.-]+/[\w.-]+:[\w./-]+")
    for g in catalog.gpus:
        assert openable.search(g.source), g.id


def test_sources_md_lists_each_address_once() -> None:
    rows = [line for line in SOURCES_MD.splitlines() if line.startswith("| ") and "://" in line]
    addresses = [re.search(r"https?://\S+", line).group(0) for line in rows]  # type: ignore[union-attr]
    assert len(addresses) == len(set(addresses))


def test_answers_show_both_languages_of_the_notes(catalog: Catalog) -> None:
    for p in catalog.prices:
        if p.note:
            assert p.note_zh and re.search(r"[\u4e00-\u9fff]", p.note_zh), (p.instance_type, p.billing)
    for r in catalog.instances:
        assert r.note and r.note_zh, r.instance_type
