"""Catalog documents: one per family and language, regenerated only when the catalog files change."""

from __future__ import annotations

from pathlib import Path

from service.retrieval.catalog_docs import QUOTE_LINKS, ensure_catalog_docs
from service.retrieval.chunking import chunk_document
from service.retrieval.config import RetrievalConfig


def test_one_document_per_family_and_language(config: RetrievalConfig) -> None:
    out = config.catalog_docs_dir
    assert ensure_catalog_docs(config.knowledge_dir, out) is True
    names = sorted(p.name for p in out.glob("*.md"))
    assert names == ["jdcloud-p.n1p40.en.md", "jdcloud-p.n1p40.zh.md", "tencent-pnv4.en.md", "tencent-pnv4.zh.md"]
    zh = (out / "tencent-pnv4.zh.md").read_text(encoding="utf-8")
    for word in ("腾讯云", "显卡", "显存", "按量计费", "包月", "价格", "PNV4.7XLARGE116", QUOTE_LINKS["tencent"]):
        assert word in zh
    en = (out / "tencent-pnv4.en.md").read_text(encoding="utf-8")
    # one column per billing, each price with its date (and, older than price_max_age_days, that it may have changed)
    old_en, old_zh = "; it may have changed, check the cloud's official price calculator", "，可能已调整，请以官网价格计算器为准"
    assert f"| PNV4.7XLARGE116 | 10.5 (estimate, 2026-01-01{old_en}) | 4750 (estimate, 2026-01-01{old_en}) |" in en
    assert f"| PNV4.7XLARGE116 | 10.5（估算，2026-01-01{old_zh}） | 4750（估算，2026-01-01{old_zh}） |" in zh
    assert "FP8: no" in en and "NVLink: none (PCIe Gen4)" in en
    assert "midpoint of the A10 range" in en  # price provenance note
    assert QUOTE_LINKS["jdcloud"] in (out / "jdcloud-p.n1p40.en.md").read_text(encoding="utf-8")


def test_documents_chunk_with_catalog_metadata(config: RetrievalConfig) -> None:
    ensure_catalog_docs(config.knowledge_dir, config.catalog_docs_dir)
    path = config.catalog_docs_dir / "tencent-pnv4.en.md"
    chunks = chunk_document(path.read_text(encoding="utf-8"), "catalog/tencent-pnv4.en.md")
    assert [c.id.split("#")[1] for c in chunks] == [
        "overview-regions-and-sale-status",
        "gpu-nvidia-a10-24gb",
        "sizes-gpus-vcpu-ram-network",
        "prices-on-demand-monthly-spot",
        "price-sources-and-notes",
    ]
    assert all(c.clouds == ("tencent",) and c.ref == QUOTE_LINKS["tencent"] for c in chunks)


def test_regenerated_only_when_inputs_change(config: RetrievalConfig) -> None:
    out = config.catalog_docs_dir
    assert ensure_catalog_docs(config.knowledge_dir, out) is True
    assert ensure_catalog_docs(config.knowledge_dir, out) is False  # same bytes: nothing written
    instances = config.knowledge_dir / "catalog" / "instances.csv"
    lines = instances.read_text(encoding="utf-8").splitlines(keepends=True)
    instances.write_text("".join(lines[:2]), encoding="utf-8")  # drop the JD family
    prices = config.knowledge_dir / "catalog" / "prices.csv"
    prices.write_text("".join(prices.read_text(encoding="utf-8").splitlines(keepends=True)[:3]), encoding="utf-8")
    assert ensure_catalog_docs(config.knowledge_dir, out) is True
    assert sorted(p.name for p in out.glob("*.md")) == ["tencent-pnv4.en.md", "tencent-pnv4.zh.md"]


def test_no_catalog_means_no_documents(tmp_path: Path) -> None:
    out = tmp_path / "docs"
    out.mkdir()
    (out / "old.en.md").write_text("stale", encoding="utf-8")
    assert ensure_catalog_docs(tmp_path / "empty-knowledge", out) is False
    assert not out.exists()
