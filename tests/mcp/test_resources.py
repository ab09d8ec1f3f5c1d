"""The guide's sections as resources: one per `## ` section of every knowledge/guide file, with a title, read back
by URI (Chinese anchors percent-encoded), a whole document without an anchor, an unknown URI an error."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.shared.exceptions import McpError

from service.mcp import guide
from tests.conftest import KNOWLEDGE_DIR
from tests.mcp.conftest import in_memory

GUIDE = KNOWLEDGE_DIR / "guide"


def test_every_section_is_listed_with_a_title(context: Any) -> None:
    listed = in_memory(context, lambda s: s.list_resources()).resources
    headings = sum(1 for p in GUIDE.glob("*.md") for line in p.read_text(encoding="utf-8").splitlines()
                   if line.startswith("## "))
    assert len(listed) >= headings  # each heading, plus a document's text before its first heading
    assert all(str(r.uri).startswith("guide://") and r.title and r.mimeType == "text/markdown" for r in listed)
    assert len({str(r.uri) for r in listed}) == len(listed)


def test_read_sections_back(context: Any) -> None:
    sections = guide.sections(GUIDE)
    zh = next(s for s in sections if s.lang == "zh" and s.anchor != s.anchor.encode("ascii", "ignore").decode())
    assert "%" in zh.uri  # a Chinese anchor, percent-encoded
    for s in (zh, next(s for s in sections if s.lang == "en")):
        text = in_memory(context, lambda c, s=s: c.read_resource(s.uri)).contents[0].text
        assert text.startswith(f"## {s.title}") and s.body in text
    whole = in_memory(context, lambda c: c.read_resource("guide://99-errata.en.md")).contents[0].text
    assert whole.count("\n## ") >= 2 and "Sources:" in whole


@pytest.mark.parametrize("uri", ["guide://nope.md", "guide://99-errata.en.md#no-such-section", "file:///etc/passwd",
                                 "guide://../settings.py"])
def test_unknown_uri_is_an_error(context: Any, uri: str) -> None:
    async def read(client: Any) -> str:
        try:
            await client.read_resource(uri)
        except McpError as exc:
            return str(exc)
        return "read"

    assert "Use a URI from resources/list" in in_memory(context, read)


def test_passages_point_at_their_section(context: Any) -> None:
    """A search passage's resource_uri reads the section it came from (the chunker's anchors)."""
    from service.retrieval.chunking import chunk_document

    path = GUIDE / "05-multi-gpu-pitfalls.zh.md"
    chunk = chunk_document(path.read_text(encoding="utf-8"), f"guide/{path.name}")[2]
    from service.retrieval.types import Passage

    p = Passage(id=chunk.id, source=chunk.source, title=chunk.title, section=chunk.section, text=chunk.text,
                score=1.0, dense_rank=1, bm25_rank=1, lang=chunk.lang, ref=chunk.ref)
    text = guide.read(GUIDE, guide.passage_dict(p)["resource_uri"])
    assert text is not None and chunk.section in text
