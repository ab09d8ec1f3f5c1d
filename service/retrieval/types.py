"""Value types shared by the retrieval modules: a chunk as indexed, a passage as returned."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class SourceRef:
    """A citation a guide document gives for its claims (front matter `sources`)."""

    title: str
    ref: str


@dataclass(frozen=True)
class Chunk:
    """One indexed unit: a `## ` section (or part of a long one) with its document's metadata."""

    id: str  # "<relative path>#<anchor>", stable across runs while the heading stays
    source: str  # path relative to the corpus root, e.g. "guide/03-fp8.en.md"
    title: str  # document title
    section: str  # section heading
    text: str  # what is embedded and BM25-indexed: "<title> — <section>" then the body
    lang: str  # "zh" | "en"
    topics: tuple[str, ...] = ()
    clouds: tuple[str, ...] = ()  # empty: applies to every cloud
    ref: str = ""  # where a reader can check it: a URL, or the section id for guide sections
    sources: tuple[SourceRef, ...] = ()
    section_id: str = ""  # "<relative path>#<anchor of the section's first part>": shared by all its parts
    hash: str = ""  # content hash over text and metadata; decides whether re-indexing is needed

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Chunk:
        return cls(
            id=raw["id"],
            source=raw["source"],
            title=raw["title"],
            section=raw["section"],
            text=raw["text"],
            lang=raw["lang"],
            topics=tuple(raw.get("topics", ())),
            clouds=tuple(raw.get("clouds", ())),
            ref=raw.get("ref", ""),
            sources=tuple(SourceRef(**s) for s in raw.get("sources", ())),
            section_id=raw.get("section_id", ""),
            hash=raw.get("hash", ""),
        )


@dataclass(frozen=True)
class Filters:
    """Search filters, applied identically to the dense and the BM25 side."""

    lang: str | None = None
    cloud: str | None = None  # keeps chunks tagged with this cloud and cloud-agnostic ones
    topic: str | None = None

    def matches(self, chunk: Chunk) -> bool:
        if self.lang and chunk.lang != self.lang:
            return False
        if self.cloud and chunk.clouds and self.cloud not in chunk.clouds:
            return False
        return not (self.topic and self.topic not in chunk.topics)

    def to_where(self) -> dict[str, Any] | None:
        """The same filter as a Chroma `where` clause (see store.chunk_metadata for the keys)."""
        clauses: list[dict[str, Any]] = []
        if self.lang:
            clauses.append({"lang": self.lang})
        if self.cloud:
            clauses.append({"$or": [{"clouds": {"$contains": self.cloud}}, {"cloud_any": True}]})
        if self.topic:
            clauses.append({"topics": {"$contains": self.topic}})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}


@dataclass(frozen=True)
class Passage:
    """A search result with what a citation needs and how each retriever ranked it (1-based; None = not found)."""

    id: str
    source: str
    title: str
    section: str
    text: str
    score: float
    dense_rank: int | None
    bm25_rank: int | None
    lang: str
    ref: str
    sources: tuple[SourceRef, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
