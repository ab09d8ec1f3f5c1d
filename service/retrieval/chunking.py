"""Heading-aware chunking of Markdown documents with YAML front matter.

A document is split on `## ` headings; the text before the first one (after `# Title`) is its own chunk. A section
longer than `max_chars` is split on paragraphs (tables on rows, their header repeated). Each chunk's text starts
with "<title> — <section>" so a chunk read alone still says what it is about.

Ids are `<relative path>#<anchor>`, the anchor being the heading's slug; repeats get -2, -3 (parts of a long
section take the next free suffix), so ids stay stable while headings do.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import replace
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from service.errors import CatalogError
from service.retrieval.types import Chunk, SourceRef
from service.yamlio import load_yaml

DEFAULT_MAX_CHARS = 1000
_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)
_FENCE = re.compile(r"^(```|~~~)")


class SourceModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str
    ref: str


class FrontMatter(BaseModel):
    """Front matter every guide document carries (catalog documents are generated with the same keys)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    title: str
    lang: Literal["zh", "en"]
    topics: list[str] = Field(default_factory=list)
    clouds: list[str] = Field(default_factory=list)
    sources: list[SourceModel] = Field(default_factory=list)
    ref: str = Field(default="", description="a URL to cite instead of the chunk id (generated documents)")


def slugify(heading: str) -> str:
    """GitHub-style slug that keeps CJK: lowercase, punctuation dropped, spaces to '-'."""
    text = unicodedata.normalize("NFKC", heading).strip().lower()
    kept = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    slug = re.sub(r"\s+", "-", kept).strip("-")
    return slug or "section"


def split_front_matter(text: str, path: str) -> tuple[FrontMatter, str]:
    match = _FRONT_MATTER.match(text)
    if not match:
        raise CatalogError(f"{path}: no YAML front matter.", "Start the file with '---', the keys id, title, lang, then '---'.")
    try:
        raw = load_yaml(match.group(1)) or {}
        meta = FrontMatter.model_validate(raw)
    except (yaml.YAMLError, ValidationError) as exc:
        raise CatalogError(f"{path}: invalid front matter: {exc}", "Fix the front matter keys and values.") from exc
    return meta, text[match.end() :]


def _sections(body: str) -> tuple[str | None, list[tuple[str | None, str]]]:
    """(`# ` title or None, [(heading or None for the preamble, section text)]); fenced code is never split."""
    title: str | None = None
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    in_fence = False
    for line in body.splitlines():
        if _FENCE.match(line.strip()):
            in_fence = not in_fence
        if not in_fence and line.startswith("# ") and title is None and not any(s[1] for s in sections):
            title = line[2:].strip()
        elif not in_fence and line.startswith("## "):
            sections.append((line[3:].strip(), []))
        else:
            sections[-1][1].append(line)
    return title, [(h, "\n".join(lines).strip()) for h, lines in sections]


def _blocks(text: str) -> list[str]:
    """Paragraphs (blank-line separated), keeping fenced code blocks whole."""
    blocks: list[str] = []
    current: list[str] = []
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line.strip()):
            in_fence = not in_fence
        if not line.strip() and not in_fence:
            if current:
                blocks.append("\n".join(current))
                current = []
        else:
            current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def _split_block(block: str, max_chars: int, first_budget: int) -> list[str]:
    """A block over the cap is split on lines (the first piece fits `first_budget`); a table's header and separator
    rows start every piece."""
    lines = block.splitlines()
    header: list[str] = []
    if len(lines) > 2 and lines[0].lstrip().startswith("|") and set(lines[1].strip()) <= set("|-: "):
        header, lines = lines[:2], lines[2:]
    pieces: list[str] = []
    current: list[str] = []
    budget = first_budget
    for line in lines:
        size = sum(len(x) + 1 for x in header + current)
        if current and size + len(line) > budget:
            pieces.append("\n".join(header + current))
            current = []
            budget = max_chars
        current.append(line)
    if current:
        pieces.append("\n".join(header + current))
    return pieces


def pack(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[str]:
    """Greedily pack paragraphs into parts of at most `max_chars` (a single overlong line may exceed it). An
    oversized paragraph or table is split on lines, its first piece filling the current part when there is room."""
    parts: list[str] = []
    current = ""
    for block in _blocks(text):
        if len(block) <= max_chars:
            pieces = [block]
        else:
            room = max_chars - len(current) - 2 if current else max_chars
            pieces = _split_block(block, max_chars, room if room >= max_chars // 4 else max_chars)
        for piece in pieces:
            if current and len(current) + 2 + len(piece) > max_chars:
                parts.append(current)
                current = ""
            current = f"{current}\n\n{piece}" if current else piece
    if current:
        parts.append(current)
    return parts


def content_hash(chunk: Chunk) -> str:
    payload = chunk.to_dict()
    payload.pop("hash")
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:16]


def chunk_document(text: str, rel_path: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """All chunks of one Markdown document; `rel_path` (posix, relative to the corpus root) prefixes the ids."""
    meta, body = split_front_matter(text, rel_path)
    heading_title, sections = _sections(body)
    title = heading_title or meta.title
    taken: set[str] = set()

    def anchor_for(heading: str) -> str:
        base = anchor = slugify(heading)
        n = 1
        while anchor in taken:
            n += 1
            anchor = f"{base}-{n}"
        taken.add(anchor)
        return anchor

    chunks: list[Chunk] = []
    for heading, section_text in sections:
        if not section_text:
            continue
        section = heading or title
        first_anchor = ""
        for part in pack(section_text, max_chars):
            anchor = anchor_for(section)
            first_anchor = first_anchor or anchor
            chunk_id = f"{rel_path}#{anchor}"
            chunk = Chunk(
                id=chunk_id,
                source=rel_path,
                title=title,
                section=section,
                text=f"{title} — {section}\n\n{part}" if heading else f"{title}\n\n{part}",
                lang=meta.lang,
                topics=tuple(meta.topics),
                clouds=tuple(meta.clouds),
                ref=meta.ref or f"{rel_path}#{first_anchor}",
                sources=tuple(SourceRef(s.title, s.ref) for s in meta.sources),
                section_id=f"{rel_path}#{first_anchor}",
            )
            chunks.append(replace(chunk, hash=content_hash(chunk)))
    return chunks


def chunk_files(root: Path, paths: list[Path], prefix: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """Chunks of every file, ids relative to `root` under `prefix` (e.g. "guide/01-x.en.md#anchor")."""
    out: list[Chunk] = []
    for path in sorted(paths):
        rel = f"{prefix}/{path.relative_to(root).as_posix()}" if prefix else path.relative_to(root).as_posix()
        out.extend(chunk_document(path.read_text(encoding="utf-8"), rel, max_chars))
    return out
