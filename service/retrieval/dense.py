"""The dense index's life: open the generation in use, or build a new one; report progress; heal after errors.

- Open: the pointer names a generation built from these chunks with this model; it is opened, verified (count +
  one query), and the embedding model is loaded and warmed before the status says ready.
- Build: one builder per data dir (a file lock; other processes wait, showing the builder's progress, then open
  its result). Unchanged chunks are copied from the generation in use, the rest embedded; the new generation is
  verified before the pointer names it, so a build killed half-way leaves the old index working.
- Heal: any Chroma error at open or query makes `fail()` drop the store (search answers from BM25, the status says
  why) and rebuild in the background.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from service.errors import DependencyUnavailableError
from service.retrieval.config import RetrievalConfig
from service.retrieval.dense_parts import (
    BuildCancelled,
    DenseStatus,
    IndexReport,
    Progress,
    build_lock,
    signature,
)
from service.retrieval.embeddings import Embedder
from service.retrieval.generations import Generations, generations_for, new_generation_name
from service.retrieval.store import VectorStore, as_unavailable
from service.retrieval.types import Chunk

__all__ = ["BuildCancelled", "DenseIndex", "DenseStatus", "IndexReport", "Progress"]

log = logging.getLogger(__name__)
RETRY_S = 30.0
BUILD_NICE = 10  # a background build yields the CPU to requests (embedding is minutes of CPU on a small machine)  # a failed open/build is tried again on the first search after this long
EMBED_BATCH = 4  # chunks per model call: short, so progress, shutdown and waiting readers are never held long


class DenseIndex:
    """The vector store in use (or none), its status, and the builds that replace it."""

    def __init__(self, config: RetrievalConfig, embedder: Embedder, generations: Generations | None = None) -> None:
        self.config = config
        self.embedder = embedder
        self.gens = generations or generations_for(config)
        self.status = DenseStatus()
        self.chunks: list[Chunk] = []
        self.progress: Progress | None = None  # console reporter for builds (the server and the CLI set one)
        self.stop = threading.Event()
        self._store: VectorStore | None = None
        self._generation = ""
        self._stamp = 0
        self._lock = threading.Lock()  # one open/build at a time in this process
        self._thread: threading.Thread | None = None
        self._failed_at = 0.0

    # ------------------------------------------------------------------ using it
    @property
    def store(self) -> VectorStore | None:
        """The store to query, or None (answer from BM25). Follows a new generation another process swapped in."""
        if self._store is not None and self.gens.pointer_stamp() != self._stamp and not self._lock.locked():
            self.start(self.chunks, follow=True)
        elif self.status.state == "failed" and time.monotonic() - self._failed_at > RETRY_S:
            self._failed_at = time.monotonic()
            self.start(self.chunks)  # a Chroma server back up, a full disk freed: try again
        return self._store

    def fail(self, exc: BaseException, store: VectorStore | None = None) -> None:
        """A Chroma error while using `store`: stop using it, say why, rebuild in the background."""
        if store is not None and store is not self._store:
            return  # an old generation, already replaced
        err = as_unavailable(exc, "querying the vector index")
        log.warning("dense retrieval degraded, rebuilding the vector index: %s", err.message)
        bad, self._store = self._generation, None
        self.status = DenseStatus("degraded", 0, len(self.chunks), err.message)
        self.start(self.chunks, bad=bad)

    # ------------------------------------------------------------------ getting one
    def start(self, chunks: Sequence[Chunk], bad: str = "", follow: bool = False) -> None:
        """Open or build in a background thread (no-op while one runs). `follow`: only open a generation another
        process swapped in, when it is built from the same chunks (never build)."""
        self.chunks = list(chunks)
        if self._thread is not None and self._thread.is_alive():
            return
        args = (bad, follow)
        self._thread = threading.Thread(target=self._background, args=args, name="gpu-advisor-dense", daemon=True)
        self._thread.start()

    def _background(self, bad: str, follow: bool) -> None:
        with contextlib.suppress(OSError, AttributeError):  # Linux: per thread; the engine's threads inherit it
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BUILD_NICE)  # chats come first
        try:
            if follow:
                with self._lock:
                    if not self._open_current(signature(self.chunks, self.embedder.model_id), bad):
                        self._stamp = self.gens.pointer_stamp()  # another corpus: keep the store we have
                return
            self.ensure(self.chunks, bad=bad)
        except BuildCancelled:
            pass
        except DependencyUnavailableError as exc:
            log.warning("dense retrieval unavailable: %s", exc.message)
        except Exception as exc:  # noqa: BLE001 - a background failure must show in /readyz, not kill the thread
            log.exception("building the vector index failed")
            self.status = DenseStatus("failed", 0, len(self.chunks), f"{type(exc).__name__}: {exc}"[:300])
            self._failed_at = time.monotonic()

    def join(self, timeout_s: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout_s)

    def close(self, timeout_s: float = 30.0) -> None:
        """Stop a build between batches, wait for it, release the store's files."""
        self.stop.set()
        self.join(timeout_s)
        if self._store is not None:
            self._store.close()

    def open_existing(self, chunks: Sequence[Chunk]) -> bool:
        """Use the index already built for these chunks and this model; never build (one-shot CLI calls, where a
        build of several minutes would hold the answer). False, with the reason in `status`, when there is none."""
        with self._lock:
            self.chunks = list(chunks)
            try:
                if self._open_current(signature(self.chunks, self.embedder.model_id), ""):
                    return True
            except DependencyUnavailableError as exc:
                self.status = DenseStatus("failed", 0, len(self.chunks), exc.message)
                return False
            if self.status.state != "degraded":
                self.status = DenseStatus("not built", 0, len(self.chunks),
                                          "no vector index for this corpus yet; `gpu-advisor index` builds it")
            return False

    def ensure(self, chunks: Sequence[Chunk], *, rebuild: bool = False, bad: str = "") -> IndexReport:
        """Open the generation in use when it matches the chunks and the model; otherwise build one. Blocking."""
        with self._lock:
            self.chunks = list(chunks)
            try:
                return self._ensure(rebuild, bad)
            except DependencyUnavailableError as exc:
                self.status = DenseStatus("failed", 0, len(self.chunks), exc.message)
                self._failed_at = time.monotonic()
                raise

    def _ensure(self, rebuild: bool, bad: str) -> IndexReport:
        started = time.perf_counter()
        sig = signature(self.chunks, self.embedder.model_id)
        if not rebuild and self._open_current(sig, bad):
            return self._unchanged(started)
        if not rebuild:
            self._open_current(f"{sig}:partial", bad)  # the guide's vectors from a build cut short: use them meanwhile
        reason = self.status.reason if self.status.state in ("degraded", "failed") else ""
        self._building("building", 0, reason)

        def waiting() -> None:
            self._building("waiting", self._builder_progress()[0], reason)

        with build_lock(self.gens.lock_path, waiting, self.stop):
            if not rebuild and self._open_current(sig, bad):  # another process built it meanwhile
                return self._unchanged(started)
            self._building("building", 0, reason)
            return self._build(sig, rebuild, bad, started)

    def _building(self, state: str, done: int, reason: str = "") -> None:
        """Progress; a store already in use (the previous or a partial generation) stays searchable (`ready`, and
        /readyz says `rebuilding done/total`: the real state, not `ready`)."""
        ready = self._store is not None and self.status.state == "ready"
        self.status = DenseStatus("ready" if ready else state, done, len(self.chunks), "" if ready else reason,
                                  rebuilding=ready)

    def _unchanged(self, started: float) -> IndexReport:
        n = len(self.chunks)
        return IndexReport(0, 0, 0, n, round(time.perf_counter() - started, 3), False, n)

    def _open_current(self, sig: str, bad: str) -> bool:
        """Use the generation the pointer names, when it is this corpus and model, verified and warmed."""
        try:
            pointer = self.gens.read_pointer()
        except BaseException as exc:  # noqa: BLE001 - a Chroma server that fails: see as_unavailable
            raise as_unavailable(exc, "reading the index pointer") from exc
        if pointer is None or pointer.get("signature") != sig or pointer["generation"] == bad:
            return False
        if self._store is not None and self._generation == pointer["generation"]:
            self._stamp = self.gens.pointer_stamp()
            return True
        self.status = DenseStatus("opening", 0, len(self.chunks))
        try:
            store = self.gens.open(pointer["generation"], self.embedder)
            store.verify(int(pointer.get("chunks", len(self.chunks))))
        except (DependencyUnavailableError, FileNotFoundError) as exc:
            reason = exc.message if isinstance(exc, DependencyUnavailableError) else str(exc)
            log.warning("vector index %s unusable, rebuilding: %s", pointer["generation"], reason)
            self.status = DenseStatus("degraded", 0, len(self.chunks), reason)
            return False
        partial = str(pointer.get("signature", "")).endswith(":partial")
        self._swap(store, str(pointer["generation"]), int(pointer.get("chunks", 0)) if partial else None)
        return True

    def _swap(self, store: VectorStore, generation: str, partial: int | None = None) -> None:
        """Search `store` from now on. `partial`: it holds that many of the chunks (the guide's part, swapped in
        while the rest embeds), so /readyz says `rebuilding partial/total`, never `ready` between the phases."""
        self.embedder.load()
        self.embedder.embed_queries(["warm-up"])  # the first real query pays no first-call cost
        old, self._store, self._generation = self._store, store, generation
        self._stamp = self.gens.pointer_stamp()
        n = len(self.chunks)
        self.status = DenseStatus("ready", n if partial is None else partial, n, rebuilding=partial is not None)
        if old is not None and old is not store:
            old.close()

    def _builder_progress(self) -> tuple[int, int]:
        try:
            data = json.loads(self.gens.progress_path.read_text(encoding="utf-8"))
            return int(data["done"]), int(data["total"])
        except (OSError, ValueError, KeyError, TypeError):
            return 0, len(self.chunks)

    def _report_progress(self, done: int, total: int) -> None:
        self._building("building", done, self.status.reason)
        tmp = self.gens.progress_path.with_suffix(f".{os.getpid()}.tmp")
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps({"done": done, "total": total, "pid": os.getpid()}), encoding="utf-8")
            os.replace(tmp, self.gens.progress_path)
        if self.progress is not None:
            self.progress(done, total)

    def _previous(self, rebuild: bool, bad: str) -> tuple[dict[str, Any] | None, dict[str, tuple[str, list[float]]]]:
        """The pointer in use and, when it is the same model, its vectors (copied into the new generation)."""
        pointer = self.gens.read_pointer()
        if rebuild or pointer is None or pointer.get("embedding_model") != self.embedder.model_id:
            return pointer, {}
        if pointer["generation"] == bad:
            return pointer, {}
        try:
            old = self.gens.open(pointer["generation"], self.embedder)
            vectors = old.vectors()
            if old is not self._store:
                old.close()
            return pointer, vectors
        except (DependencyUnavailableError, FileNotFoundError) as exc:
            log.warning("previous vector index unreadable, embedding everything: %s", exc)
            return pointer, {}

    def _build(self, sig: str, rebuild: bool, bad: str, started: float) -> IndexReport:
        """Unchanged chunks copied, the rest embedded: the guide first, swapped in as a partial generation so
        dense search reads the guide while the (larger) generated catalog documents are embedded."""
        pointer, previous = self._previous(rebuild, bad)
        keep = {str(pointer["generation"]), str(pointer.get("previous", ""))} - {bad, ""} if pointer else set()
        self.gens.collect_garbage(keep)  # orphans of killed builds go; readers may lag one generation
        vectors = {c.id: previous[c.id][1] for c in self.chunks if c.id in previous and previous[c.id][0] == c.hash}
        reused = len(vectors)
        todo = [c for c in self.chunks if c.id not in vectors]
        guide = [c for c in todo if not c.source.startswith("catalog/")]
        phases = [guide, [c for c in todo if c.source.startswith("catalog/")]] if 0 < len(guide) < len(todo) else [todo]
        before = str(pointer["generation"]) if pointer and pointer["generation"] != bad else ""
        for n, phase in enumerate(phases):
            last = n == len(phases) - 1
            before = self._write_generation(phase, vectors, sig if last else f"{sig}:partial", before, started)
        wanted = {c.id for c in self.chunks}
        updated = sum(1 for c in todo if c.id in previous)
        return IndexReport(
            added=len(todo) - updated,
            updated=updated,
            deleted=sum(1 for i in previous if i not in wanted),
            unchanged=reused,
            seconds=round(time.perf_counter() - started, 3),
            rebuilt=rebuild or (pointer is not None and pointer.get("embedding_model") != self.embedder.model_id),
            total=len(self.chunks),
        )

    def _write_generation(
        self, todo: list[Chunk], vectors: dict[str, list[float]], sig: str, before: str, started: float
    ) -> str:
        """A new generation: the vectors we have plus `todo` embedded; verified, named by the pointer, in use."""
        generation = new_generation_name()
        store = self.gens.open(generation, self.embedder, create=True)
        store.create()
        have = [c for c in self.chunks if c.id in vectors]
        if have:
            store.upsert(have, [vectors[c.id] for c in have])
        self._report_progress(len(vectors), len(self.chunks))
        for start in range(0, len(todo), EMBED_BATCH):
            if self.stop.is_set():
                raise BuildCancelled()
            part = todo[start : start + EMBED_BATCH]
            embedded = self.embedder.embed([c.text for c in part])
            store.upsert(part, embedded)
            vectors.update((c.id, v) for c, v in zip(part, embedded, strict=True))
            self._report_progress(len(vectors), len(self.chunks))
        count = sum(1 for c in self.chunks if c.id in vectors)
        store.verify(count)
        self.gens.write_pointer({
            "generation": generation,
            "previous": before,
            "signature": sig,
            "embedding_model": self.embedder.model_id,
            "model_location": self.embedder.location,
            "chunks": count,
            "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "build_s": round(time.perf_counter() - started, 1),
        })
        self._swap(store, generation, count if sig.endswith(":partial") else None)
        self.gens.collect_garbage({generation, before} - {""})
        return generation

    def describe(self) -> dict[str, Any]:
        """Pointer and status, for the manifest and `gpu-advisor index`."""
        return {"status": self.status.label(), "generation": self._generation,
                "store": self.gens.label(self._generation) if self._generation else ""}
