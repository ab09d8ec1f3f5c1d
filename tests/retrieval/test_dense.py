"""The vector index is derived data: fresh generations swapped in whole, verified before use, healed after errors.

Uses HashEmbedder (instant, deterministic) and the tiny fixture corpus; the real model is covered elsewhere.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from service.retrieval.config import RetrievalConfig
from service.retrieval.dense import DenseIndex, DenseStatus
from service.retrieval.generations import LocalGenerations
from service.retrieval.hybrid import Retriever
from service.retrieval.ingest import build_index, refresh_corpus
from service.settings import REPO_ROOT
from tests.retrieval.conftest import HashEmbedder


def _generation_dirs(config: RetrievalConfig) -> list[str]:
    root = config.data_dir / "vectors"
    return sorted(p.name for p in root.iterdir() if p.is_dir() and p.name.startswith("g")) if root.is_dir() else []


def _pointer(config: RetrievalConfig) -> dict[str, object]:
    pointer = LocalGenerations(config).read_pointer()
    assert pointer is not None
    return pointer


def _wait(predicate: object, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_build_swaps_in_a_new_generation_and_drops_the_old_one(config: RetrievalConfig) -> None:
    embedder = HashEmbedder()
    first = build_index(config, embedder)
    gen1 = _pointer(config)["generation"]
    assert first.added == first.total > 0 and gen1 in _generation_dirs(config)
    assert _pointer(config)["chunks"] == first.total and len(_generation_dirs(config)) == 2  # + the guide-only one
    assert build_index(config, embedder).unchanged == first.total  # up to date: nothing written
    assert _pointer(config)["generation"] == gen1
    path = config.knowledge_dir / "guide" / "02-billing.en.md"
    path.write_text(path.read_text().replace("checkpoint often", "checkpoint every 30 minutes"))
    third = build_index(config, embedder)
    assert (third.updated, third.unchanged) == (1, first.total - 1)  # the rest copied, not embedded again
    gen2 = _pointer(config)["generation"]
    assert gen2 != gen1 and _pointer(config)["previous"] == gen1
    build_index(config, embedder, rebuild=True)
    assert gen1 not in _generation_dirs(config)  # older than the previous generation: deleted


@pytest.mark.parametrize("damage", ["garbage sqlite", "missing segments"])
def test_a_corrupted_store_serves_bm25_then_heals(config: RetrievalConfig, damage: str) -> None:
    embedder = HashEmbedder()
    build_index(config, embedder)
    bad = str(_pointer(config)["generation"])
    gen_dir = config.data_dir / "vectors" / bad
    if damage == "garbage sqlite":
        (gen_dir / "chroma.sqlite3").write_bytes(os.urandom(4096) * 8)
    else:
        for seg in [p for p in gen_dir.iterdir() if p.is_dir()]:
            for f in seg.iterdir():
                f.write_bytes(b"\0" * 16)
        (gen_dir / "chroma.sqlite3").write_bytes(b"")
    retriever = Retriever(config, embedder, background=True)
    passages = retriever.search("spot instances", k=2)  # answers at once, from BM25 (dense is being rebuilt)
    assert passages[0].id == "guide/02-billing.en.md#spot-instances"
    _wait(lambda: retriever.dense.status.state == "ready")
    assert _pointer(config)["generation"] != bad
    top = retriever.search("spot instances", k=2)[0]
    assert top.dense_rank is not None and retriever.warnings == []
    retriever.close()


def test_a_query_error_degrades_with_the_reason_and_rebuilds(config: RetrievalConfig) -> None:
    gate = threading.Event()
    embedder = HashEmbedder(gate=gate)
    gate.set()
    retriever = Retriever(config, embedder)
    assert retriever.dense.status.state == "ready"
    old = retriever.store
    assert old is not None

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("Error executing plan: Error sending backfill request to compactor")

    old.collection.query = broken  # what Chroma 1.x raised here on a wedged store
    gate.clear()  # hold the rebuild so the degraded state can be seen
    passages = retriever.search("spot instances", k=2)
    assert passages[0].id == "guide/02-billing.en.md#spot-instances" and passages[0].dense_rank is None
    status = retriever.dense.status
    assert status.state in ("degraded", "building") and "backfill request to compactor" in status.reason
    assert "BM25 only" in retriever.warnings[0] and "compactor" in retriever.warnings[0]
    gate.set()
    _wait(lambda: retriever.dense.status.state == "ready")
    assert retriever.store is not old and retriever.search("spot instances", k=1)[0].dense_rank is not None
    retriever.close()


_BUILD = """
import sys
from pathlib import Path
from service.retrieval.config import RetrievalConfig
from service.retrieval.ingest import build_index
from tests.retrieval.conftest import HashEmbedder
config = RetrievalConfig(knowledge_dir=Path(sys.argv[1]), data_dir=Path(sys.argv[2]))
report = build_index(config, HashEmbedder(delay_s=float(sys.argv[3])), rebuild=sys.argv[4] == "rebuild")
print(report.added, report.unchanged, flush=True)
"""


def _build_process(config: RetrievalConfig, delay_s: float, rebuild: bool) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "ANONYMIZED_TELEMETRY": "False"}
    args = [str(config.knowledge_dir), str(config.data_dir), str(delay_s), "rebuild" if rebuild else "-"]
    return subprocess.Popen([sys.executable, "-c", _BUILD, *args], cwd=REPO_ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _progress(config: RetrievalConfig) -> dict[str, int]:
    try:
        data: dict[str, int] = json.loads((config.data_dir / "vectors" / "progress.json").read_text())
        return data
    except (OSError, ValueError):
        return {}


@pytest.mark.slow  # child processes building the index
def test_kill_9_during_a_build_leaves_the_old_index_working(config: RetrievalConfig) -> None:
    embedder = HashEmbedder()
    first = build_index(config, embedder)
    before = _pointer(config)
    existing = set(_generation_dirs(config))
    proc = _build_process(config, delay_s=1.0, rebuild=True)
    try:
        _wait(lambda: _progress(config).get("pid") == proc.pid and set(_generation_dirs(config)) - existing)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert _pointer(config) == before  # the half-built generation was never named
    dense = DenseIndex(config, embedder)
    chunks = refresh_corpus(config)[0].chunks
    assert dense.ensure(chunks).unchanged == first.total  # the old generation opens and verifies
    assert dense.store is not None and dense.store.count() == first.total
    dense.close()
    orphans = set(_generation_dirs(config)) - existing
    assert orphans
    build_index(config, embedder, rebuild=True)
    assert not orphans & set(_generation_dirs(config))  # the half-built generation is deleted by the next build


@pytest.mark.slow  # child processes building the index
def test_two_processes_build_once_and_the_second_reads_the_result(config: RetrievalConfig) -> None:
    refresh_corpus(config)  # both processes then find the same corpus
    procs = [_build_process(config, delay_s=0.5, rebuild=False) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-800:] for _, err in outs]
    reports = sorted(tuple(map(int, out.split())) for out, _ in outs)
    total = reports[1][0]
    assert total > 0 and reports == [(0, total), (total, 0)]  # one embedded everything, the other waited and read it
    assert _pointer(config)["chunks"] == total and not str(_pointer(config)["signature"]).endswith(":partial")


def test_status_labels() -> None:
    assert DenseStatus("building", 120, 472).label() == "building 120/472"
    assert DenseStatus("ready", 472, 472).label() == "ready"
    degraded = DenseStatus("building", 3, 472, "Chroma failed while querying (boom).").label()
    assert degraded == "degraded: Chroma failed while querying (boom).; rebuilding 3/472"
    assert DenseStatus("ready", 166, 545, rebuilding=True).label() == "rebuilding 166/545"


def test_the_guide_is_searchable_while_the_catalog_documents_embed(config: RetrievalConfig) -> None:
    chunks = refresh_corpus(config)[0].chunks
    guide = {c.text for c in chunks if c.source.startswith("guide/")}
    gate = threading.Event()

    class CatalogWaits(HashEmbedder):
        def embed(self, texts: list[str]) -> list[list[float]]:
            if any(t not in guide for t in texts):
                gate.wait(30)
            return super().embed(texts)

    retriever = Retriever(config, CatalogWaits(), background=True)
    _wait(lambda: retriever.dense.status.state == "ready")  # the guide's generation, swapped in first
    pointer = _pointer(config)
    assert str(pointer["signature"]).endswith(":partial") and pointer["chunks"] == len(guide) < len(chunks)
    top = retriever.search("spot instances", k=1, mode="dense")[0]
    assert top.id == "guide/02-billing.en.md#spot-instances" and retriever.warnings == []
    # /readyz shows the real state while the rest embeds (it said `ready`): the guide's part serves meanwhile
    _wait(lambda: retriever.dense.status.label().startswith("rebuilding "))
    done, total = retriever.dense.status.label().removeprefix("rebuilding ").split("/")
    assert int(done) < int(total) == len(chunks)
    gate.set()
    _wait(lambda: not str(_pointer(config)["signature"]).endswith(":partial"))
    _wait(lambda: retriever.store is not None and retriever.store.count() == len(chunks))
    _wait(lambda: retriever.dense.status.label() == "ready")
    retriever.close()


def test_between_the_guides_part_and_the_catalogs_the_index_is_never_said_ready(
        config: RetrievalConfig, monkeypatch: pytest.MonkeyPatch) -> None:
    # Regression (issue 40, the race in tests/retrieval/test_startup.py): the guide's part, swapped in, set the
    # status to plain `ready` until the catalog's part reported progress, so /readyz said ready mid-build
    chunks = refresh_corpus(config)[0].chunks
    dense = DenseIndex(config, HashEmbedder())
    seen: list[str] = []
    opened = dense.gens.open

    def open_(generation: str, embedder: object, *, create: bool = False) -> object:
        if create:  # a new generation starts: what /readyz says at that moment
            seen.append(dense.status.label())
        return opened(generation, embedder, create=create)  # type: ignore[arg-type]

    monkeypatch.setattr(dense.gens, "open", open_)
    dense.ensure(chunks)
    guide = sum(1 for c in chunks if not c.source.startswith("catalog/"))
    assert seen == [f"building 0/{len(chunks)}", f"rebuilding {guide}/{len(chunks)}"]
    assert dense.status.label() == "ready"
    dense.close()


def test_a_background_build_runs_at_low_priority(config: RetrievalConfig) -> None:
    seen: list[int] = []

    class Records(HashEmbedder):
        def embed(self, texts: list[str]) -> list[list[float]]:
            seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
            return super().embed(texts)

    retriever = Retriever(config, Records(), background=True)
    _wait(lambda: retriever.dense.status.state == "ready" and not retriever.dense._thread.is_alive())  # type: ignore[union-attr]
    assert seen and min(seen) >= min(os.getpriority(os.PRIO_PROCESS, 0) + 1, 10)  # requests keep the CPU first
    retriever.close()


def test_a_one_shot_retriever_never_builds_and_opens_a_built_index(config: RetrievalConfig) -> None:
    """Regression: `gpu-advisor ask` on a fresh data dir built the whole vector index (10+ minutes with e5) before
    answering. `build=False` answers from BM25 and says why; once an index is built it is opened, not rebuilt."""
    embedder = HashEmbedder()
    refresh_corpus(config)
    fresh = Retriever(config, embedder, refresh=False, build=False)
    assert fresh.store is None and _generation_dirs(config) == []
    assert fresh.dense.status.state == "not built" and "gpu-advisor index" in fresh.warnings[0]
    assert fresh.search("checkpoint", k=2)  # BM25 still answers
    build_index(config, embedder)
    built = Retriever(config, embedder, refresh=False, build=False)
    assert built.store is not None and built.dense.status.state == "ready" and built.warnings == []
