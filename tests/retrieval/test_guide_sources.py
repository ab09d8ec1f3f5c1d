"""Sources users see: every guide page cites public URLs or files in this repository, never internal notes
(shared/); knowledge/ and prompts/ text never points at shared/ or at a repository file that does not exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "knowledge" / "guide"
SOURCES_MD = (ROOT / "knowledge" / "sources.md").read_text(encoding="utf-8")
PAGES = sorted(GUIDE.glob("*.md"))
USER_TEXT = sorted(p for d in ("knowledge", "prompts") for p in (ROOT / d).rglob("*") if p.is_file())
REPO_PATH = re.compile(r"(?<![\w/.-])knowledge/[\w./-]*\w(?:#[\w-]+)?")
# The internal notes' file names ("sizing.md A5", "clouds.md §6"): a user cannot open them.
NOTE_NAME = re.compile(r"\b(?:prices|clouds|gpus|sizing|cloud-apis|service|data-audit-2026-12|style-anchors|DESIGN|STYLE)\.md\b")


def _front_matter(page: Path) -> dict[str, object]:
    text = page.read_text(encoding="utf-8")
    assert text.startswith("---\n"), page
    meta = yaml.safe_load(text[4:text.index("\n---", 4)])
    assert isinstance(meta, dict), page
    return meta


def _problem(ref: str) -> str | None:
    """Why a cited ref cannot be opened by a user, or None when it can."""
    if re.fullmatch(r"https?://\S+", ref):
        return None
    if ref.startswith("shared/"):
        return "internal notes"
    path, _, anchor = ref.partition("#")
    if not (ROOT / path).is_file():
        return "no such file in the repository"
    if path == "knowledge/sources.md" and anchor and f'<a id="{anchor}"></a>' not in SOURCES_MD:
        return "no such key in knowledge/sources.md"
    return None


def test_there_are_guide_pages_in_both_languages() -> None:
    assert len(PAGES) >= 20
    assert {p.name.split(".")[-2] for p in PAGES} == {"en", "zh"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_guide_source_is_a_public_url_or_a_repository_file(page: Path) -> None:
    sources = _front_matter(page).get("sources")
    assert isinstance(sources, list) and sources, f"{page.name}: no sources"
    refs = []
    for s in sources:
        assert isinstance(s, dict) and set(s) == {"title", "ref"}, (page.name, s)
        assert str(s["title"]).strip() and "research notes" not in str(s["title"]), (page.name, s)
        problem = _problem(str(s["ref"]))
        assert problem is None, f"{page.name}: {s['ref']}: {problem}"
        refs.append(s["ref"])
    assert len(refs) == len(set(refs)), f"{page.name}: a source is listed twice"


@pytest.mark.parametrize("path", USER_TEXT, ids=lambda p: str(p.relative_to(ROOT)))
def test_user_visible_text_never_points_at_internal_notes(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "shared/" not in text, path
    assert not NOTE_NAME.search(text), f"{path.relative_to(ROOT)}: names an internal note ({NOTE_NAME.search(text)})"
    for ref in REPO_PATH.findall(text):
        if ref.rstrip(".") in ("knowledge/sources.md#KEY",):  # the placeholder that explains the key format
            continue
        assert _problem(ref.rstrip(".")) is None, f"{path.relative_to(ROOT)}: {ref}"


def test_the_checks_catch_what_they_guard_against() -> None:
    assert _problem("shared/reference/gpus.md#1-main-table") == "internal notes"
    assert _problem("knowledge/catalog/nope.csv") == "no such file in the repository"
    assert _problem("knowledge/sources.md#NOT-A-KEY") == "no such key in knowledge/sources.md"
    assert _problem("knowledge/sources.md#PNV5B") == "no such key in knowledge/sources.md"  # removed (issue 39)
    assert _problem("knowledge/sources.md") is None
    assert _problem("https://arxiv.org/abs/2205.05198") is None
    assert NOTE_NAME.search("(QLoRA paper; sizing.md A5)") and NOTE_NAME.search("| clouds.md §6 |")
    assert not NOTE_NAME.search("knowledge/sources.md#PNV5B") and not NOTE_NAME.search("docs/catalog-sync.md")
