"""The guide (knowledge/guide/*.md) as MCP resources, one per `## ` section, and search passages that point at them.

    guide://04-training-memory.en.md#lora-and-qlora     one section (the anchor the search index uses)
    guide://04-training-memory.en.md                    the whole document

Sections come from the retrieval chunker (service.retrieval.chunking), so a passage's `ref` and a resource's
anchor are the same string; anchors are percent-encoded in URIs (Chinese headings), and decoded when read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from service.retrieval.chunking import chunk_document
from service.retrieval.types import Passage

SCHEME = "guide"
PREFIX = "guide/"  # the corpus path of guide documents (chunk ids: guide/<file>#<anchor>)
MIME = "text/markdown"


@dataclass(frozen=True)
class Section:
    file: str
    anchor: str
    doc_title: str
    section: str
    lang: str
    body: str
    sources: tuple[tuple[str, str], ...]

    @property
    def uri(self) -> str:
        return section_uri(self.file, self.anchor)

    @property
    def title(self) -> str:
        return self.doc_title if self.section == self.doc_title else f"{self.doc_title} — {self.section}"

    def markdown(self) -> str:
        refs = "".join(f"\n- {title}: {ref}" for title, ref in self.sources)
        return f"## {self.title}\n\n{self.body}\n" + (f"\nSources:{refs}\n" if refs else "")


def section_uri(file: str, anchor: str = "") -> str:
    return f"{SCHEME}://{file}" + (f"#{quote(anchor, safe='-_.~')}" if anchor else "")


def _body(text: str) -> str:
    """A chunk's text without the '<title> — <section>' line the chunker puts first."""
    return text.split("\n\n", 1)[1] if "\n\n" in text else text


def sections(guide_dir: Path) -> list[Section]:
    """Every section of every guide document, in file and reading order; a long section's parts joined."""
    out: list[Section] = []
    for path in sorted(guide_dir.glob("*.md")):
        by_id: dict[str, list[Any]] = {}
        for chunk in chunk_document(path.read_text(encoding="utf-8"), f"{PREFIX}{path.name}"):
            by_id.setdefault(chunk.section_id, []).append(chunk)
        for section_id, parts in by_id.items():
            first = parts[0]
            out.append(Section(file=path.name, anchor=section_id.partition("#")[2], doc_title=first.title,
                               section=first.section, lang=first.lang,
                               body="\n\n".join(_body(c.text) for c in parts),
                               sources=tuple((s.title, s.ref) for s in first.sources)))
    return out


def read(guide_dir: Path, uri: str) -> str | None:
    """The Markdown of a section (or a whole document, with no anchor) by URI; None when there is none."""
    parts = urlsplit(uri)
    if parts.scheme != SCHEME or not parts.netloc or "/" in parts.netloc or parts.path not in ("", "/"):
        return None
    anchor = unquote(parts.fragment)
    found = [s for s in sections(guide_dir) if s.file == parts.netloc and (not anchor or s.anchor == anchor)]
    if not found:
        return None
    return "\n".join(s.markdown() for s in found)


def passage_dict(p: Passage) -> dict[str, Any]:
    """A search passage with the guide:// resource of its section (guide passages only)."""
    return with_resource(p.to_dict())


def with_resource(p: dict[str, Any]) -> dict[str, Any]:
    """A passage (as JSON) with the guide:// resource of its section, when it is a guide passage."""
    ref = str(p.get("ref") or p.get("id") or "")
    if ref.startswith(PREFIX):
        file, _, anchor = ref.removeprefix(PREFIX).partition("#")
        return {**p, "resource_uri": section_uri(file, anchor)}
    return p
