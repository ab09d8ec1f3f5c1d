"""Where vector-index generations live, and the pointer that names the one in use.

The vector index is derived data: each build writes a new generation, and only a complete, verified generation
is named by the pointer, which is replaced atomically. A build that dies half-way (kill -9, a Chroma error) leaves
an orphan that the next build deletes; the generation in use is never written to.

- Embedded (default): each generation is its own Chroma directory, data_dir/vectors/<gen>/; the pointer is
  data_dir/vectors/current.json (written to a temp file, then os.replace).
- Chroma server (CHROMA_HOST): each generation is a collection named gpu_advisor_knowledge__<gen>; the pointer is
  the metadata of a small collection, so every worker and host sharing the server reads the same one.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from service.retrieval.config import RetrievalConfig
from service.retrieval.embeddings import Embedder
from service.retrieval.store import COLLECTION, VectorStore, chroma_client

POINTER_FILE = "current.json"
POINTER_COLLECTION = "gpu_advisor_current"
KEEP_S = 3600.0  # an unnamed generation younger than this may be another host's build in progress (server mode)


def new_generation_name() -> str:
    return time.strftime("g%Y%m%dT%H%M%S", time.gmtime()) + f"-{os.getpid()}-{uuid.uuid4().hex[:8]}"


class _BuildFiles:
    """The build lock and progress file, always in the local data dir (also with a Chroma server)."""

    def __init__(self, config: RetrievalConfig) -> None:
        self.config = config
        self.root = config.data_dir / "vectors"

    @property
    def lock_path(self) -> Path:
        return self.root / ".build.lock"

    @property
    def progress_path(self) -> Path:
        return self.root / "progress.json"


class LocalGenerations(_BuildFiles):
    """Generations as directories under data_dir/vectors."""

    remote = False

    def read_pointer(self) -> dict[str, Any] | None:
        try:
            data = json.loads((self.root / POINTER_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and data.get("generation") else None

    def pointer_stamp(self) -> int:
        """Changes whenever the pointer is replaced (cheap: one stat)."""
        try:
            return (self.root / POINTER_FILE).stat().st_mtime_ns
        except OSError:
            return 0

    def write_pointer(self, pointer: dict[str, Any]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".{POINTER_FILE}.{os.getpid()}.{threading.get_ident()}.tmp"
        tmp.write_text(json.dumps(pointer, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, self.root / POINTER_FILE)

    def open(self, generation: str, embedder: Embedder, *, create: bool = False) -> VectorStore:
        path = self.root / generation
        if not create and not path.is_dir():
            raise FileNotFoundError(f"vector index generation {path} is missing")
        client = chroma_client(path)
        return VectorStore(client, embedder, COLLECTION)

    def label(self, generation: str) -> str:
        return str(self.root / generation)

    def collect_garbage(self, keep: set[str]) -> None:
        """Delete every generation directory not in `keep` (the caller holds the build lock)."""
        if not self.root.is_dir():
            return
        for path in self.root.iterdir():
            if path.is_dir() and path.name.startswith("g") and path.name not in keep:
                shutil.rmtree(path, ignore_errors=True)


class RemoteGenerations(_BuildFiles):
    """Generations as collections on a Chroma server; the pointer in a collection's metadata."""

    remote = True

    def __init__(self, config: RetrievalConfig) -> None:
        super().__init__(config)
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = chroma_client(self.config.data_dir, self.config.chroma_host, self.config.chroma_port)
        return self._client

    def _pointer_collection(self) -> Any:
        return self.client.get_or_create_collection(POINTER_COLLECTION, embedding_function=None)

    def read_pointer(self) -> dict[str, Any] | None:
        meta = self._pointer_collection().metadata or {}
        raw = meta.get("pointer")
        if not raw:
            return None
        data = json.loads(str(raw))
        return data if isinstance(data, dict) and data.get("generation") else None

    def pointer_stamp(self) -> int:
        return 0  # re-read only when a query fails

    def write_pointer(self, pointer: dict[str, Any]) -> None:
        self._pointer_collection().modify(metadata={"pointer": json.dumps(pointer, ensure_ascii=False)})

    def open(self, generation: str, embedder: Embedder, *, create: bool = False) -> VectorStore:
        name = f"{COLLECTION}__{generation}"
        if not create and name not in self._names():
            raise FileNotFoundError(f"collection {name} is missing on the Chroma server")
        return VectorStore(self.client, embedder, name, remote=True)

    def label(self, generation: str) -> str:
        return f"{self.config.store_label}/{COLLECTION}__{generation}"

    def _names(self) -> set[str]:
        return {str(getattr(c, "name", c)) for c in self.client.list_collections()}

    def collect_garbage(self, keep: set[str]) -> None:
        """Delete our generation collections not in `keep` and older than KEEP_S (others may be builds elsewhere)."""
        keep_names = {f"{COLLECTION}__{g}" for g in keep}
        for name in self._names():
            if not name.startswith(f"{COLLECTION}__") or name in keep_names:
                continue
            stamp = name.split("__", 1)[1][1:16]
            try:
                age = time.time() - time.mktime(time.strptime(stamp, "%Y%m%dT%H%M%S")) + time.timezone
            except ValueError:
                continue
            if age > KEEP_S:
                self.client.delete_collection(name)


Generations = LocalGenerations | RemoteGenerations


def generations_for(config: RetrievalConfig) -> Generations:
    return RemoteGenerations(config) if config.chroma_host else LocalGenerations(config)
