"""MCP fixtures: the server over the shipped catalog with a fake retriever, and a client session of the SDK's own
(in memory, stdio or Streamable HTTP) driven from plain test functions with anyio.run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import pytest
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from service.catalog.loader import Catalog
from service.mcp.server import build_server
from service.mcp.tools import McpContext
from service.retrieval.types import Passage, SourceRef
from tests.api.conftest import live_server_factory  # noqa: F401  (the live uvicorn fixture, for test_http)
from tests.conftest import KNOWLEDGE_DIR

T = TypeVar("T")
# The guide's example: "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"
GUIDE_WORKLOAD = {"model": "Qwen2-7B", "samples": 100000, "budget_cny": 3000, "budget_period": "month"}
# "4090能跑14B lora吗": Qwen2.5-14B LoRA on one RTX 4090
LORA_14B_ON_4090 = {"model": "Qwen2.5-14B", "method": "lora", "gpu": "RTX 4090", "gpu_count": 1}


class FakeRetriever:
    """One guide passage per call, echoing the query; no index, no model."""

    warnings: list[str] = []

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def search(self, query: str, k: int = 5, lang: str | None = None, cloud: str | None = None) -> list[Passage]:
        self.calls.append({"query": query, "k": k, "lang": lang, "cloud": cloud})
        ref = "guide/03-gpu-specs-precision.zh.md#fp8只有-ada-和-hopper-支持"
        return [Passage(id=ref, source="guide/03-gpu-specs-precision.zh.md", title="GPU 规格与精度支持",
                        section="FP8：只有 Ada 和 Hopper 支持", text="A10 不支持 FP8。", score=0.03, dense_rank=1,
                        bm25_rank=2, lang="zh", ref=ref, sources=(SourceRef("NVIDIA A10 datasheet", "https://x"),))][:k]


def make_context(catalog: Catalog, retriever: Callable[[], Any] | None = None) -> McpContext:
    return McpContext(catalog=lambda: catalog, guide_dir=KNOWLEDGE_DIR / "guide", retriever=retriever)


@pytest.fixture(scope="session")
def retriever() -> FakeRetriever:
    return FakeRetriever()


@pytest.fixture(scope="session")
def context(catalog: Catalog, retriever: FakeRetriever) -> McpContext:
    return make_context(catalog, lambda: retriever)


def run_async(main: Callable[[], Awaitable[T]]) -> T:
    """anyio.run(main) on a thread of its own: a test before this one may leave an event loop running on the main
    thread (Playwright's sync API does), where a second loop cannot start."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, main).result()


def in_memory(ctx: McpContext, use: Callable[[ClientSession], Awaitable[T]]) -> T:
    """Run `use` with an SDK client session connected to the server in memory."""

    async def main() -> T:
        async with create_connected_server_and_client_session(build_server(ctx)) as session:
            return await use(session)

    return run_async(main)


@pytest.fixture
def mcp_call(context: McpContext) -> Callable[[str, dict[str, Any]], Any]:
    """mcp_call("plan", {...}) -> the CallToolResult, through the SDK's client (which checks the output schema)."""

    def call(name: str, arguments: dict[str, Any]) -> Any:
        return in_memory(context, lambda s: s.call_tool(name, arguments))

    return call
