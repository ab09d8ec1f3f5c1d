"""Heading-aware chunking: ids, anchors, splitting of long sections, hashes."""

from __future__ import annotations

import pytest

from service.errors import CatalogError
from service.retrieval.chunking import chunk_document, pack, slugify

HEAD = "---\nid: x\ntitle: Doc\nlang: en\ntopics: [t]\nclouds: [tencent]\nsources: []\n---\n\n"


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("FP8 needs Ada or Hopper", "fp8-needs-ada-or-hopper"),  # plain English
        ("FP8：只有 Ada 和 Hopper 支持", "fp8只有-ada-和-hopper-支持"),  # CJK kept, full-width colon dropped
        ("BF16 versus FP16: V100, T4", "bf16-versus-fp16-v100-t4"),  # punctuation dropped
        ("  Spaces   inside  ", "spaces-inside"),  # runs of spaces collapse
        ("!!!", "section"),  # nothing left: a fallback anchor
    ],
)
def test_slugify(heading: str, slug: str) -> None:
    assert slugify(heading) == slug


def test_sections_become_chunks_with_stable_ids() -> None:
    text = HEAD + "# Doc\n\nIntro.\n\n## Alpha\n\nA text.\n\n## Beta\n\nB text.\n"
    chunks = chunk_document(text, "guide/x.en.md")
    assert [c.id for c in chunks] == ["guide/x.en.md#doc", "guide/x.en.md#alpha", "guide/x.en.md#beta"]
    alpha = chunks[1]
    assert alpha.text == "Doc — Alpha\n\nA text."  # the title prefixes every chunk
    assert (alpha.section, alpha.lang, alpha.topics, alpha.clouds) == ("Alpha", "en", ("t",), ("tencent",))
    assert alpha.ref == "guide/x.en.md#alpha"
    assert chunk_document(text, "guide/x.en.md") == chunks  # deterministic, hashes included


def test_duplicate_headings_get_numbered_anchors() -> None:
    text = HEAD + "# Doc\n\n## Notes\n\none\n\n## Notes\n\ntwo\n\n## Notes\n\nthree\n"
    assert [c.id.split("#")[1] for c in chunk_document(text, "d.md")] == ["notes", "notes-2", "notes-3"]


def test_long_section_splits_on_paragraphs_under_the_cap() -> None:
    paragraphs = [f"Paragraph {n}" + " word" * 30 for n in range(6)]
    text = HEAD + "# Doc\n\n## Long\n\n" + "\n\n".join(paragraphs) + "\n"
    chunks = chunk_document(text, "d.md", max_chars=400)
    assert len(chunks) > 1
    assert [c.id for c in chunks][:2] == ["d.md#long", "d.md#long-2"]
    assert all(c.section == "Long" and c.text.startswith("Doc — Long\n\n") for c in chunks)
    assert all(c.ref == "d.md#long" for c in chunks)  # every part cites the heading
    assert all(len(c.text) - len("Doc — Long\n\n") <= 400 for c in chunks)
    body = "\n\n".join(c.text.split("\n\n", 1)[1] for c in chunks)
    assert body == "\n\n".join(paragraphs)  # nothing lost, order kept


def test_split_table_repeats_its_header() -> None:
    rows = [f"| R{n} | {'x' * 40} |" for n in range(20)]
    table = "\n".join(["| Name | Value |", "|---|---|", *rows])
    parts = pack(table, max_chars=300)
    assert len(parts) > 1
    assert all(p.startswith("| Name | Value |\n|---|---|\n| R") for p in parts)


def test_headings_inside_code_fences_do_not_split() -> None:
    text = HEAD + "# Doc\n\n## Code\n\n```bash\n## not a heading\necho hi\n```\n"
    chunks = chunk_document(text, "d.md")
    assert [c.section for c in chunks] == ["Code"]
    assert "## not a heading" in chunks[0].text


def test_editing_one_section_changes_only_its_hash() -> None:
    before = chunk_document(HEAD + "# Doc\n\n## A\n\none\n\n## B\n\ntwo\n", "d.md")
    after = chunk_document(HEAD + "# Doc\n\n## A\n\none\n\n## B\n\ntwo, edited\n", "d.md")
    assert [c.id for c in before] == [c.id for c in after]
    assert before[0].hash == after[0].hash
    assert before[1].hash != after[1].hash


@pytest.mark.parametrize(
    "text",
    [
        "# No front matter\n",  # missing entirely
        "---\ntitle: T\nlang: en\n---\n# T\n",  # id missing
        "---\nid: x\ntitle: T\nlang: fr\n---\n# T\n",  # unsupported language
        "---\nid: x\ntitle: T\nlang: en\nauthor: me\n---\n# T\n",  # unknown key
    ],
)
def test_bad_front_matter_names_the_file(text: str) -> None:
    with pytest.raises(CatalogError, match="guide/bad.md"):
        chunk_document(text, "guide/bad.md")
