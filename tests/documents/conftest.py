"""Real plans from the shipped catalog (fixed `today`, so price-age warnings do not drift)."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from service.catalog.loader import Catalog, load_catalog
from service.planner.plan import plan
from service.planner.report import plan_to_dict
from service.settings import REPO_ROOT
from service.workload import Workload

TODAY = date(2026, 10, 1)
WORKLOADS = {
    # 7B LoRA with a budget on one GPU: single A100 on Tencent, V100 on JD. (Without gpu_count, GT4's list prices
    # are exactly linear in GPUs, so the 2-GPU size ties on cost and wins on time.)
    "qwen_lora": Workload(model="qwen2-7b", samples=100_000, budget_cny=3000, gpu_count=1),
    # 70B full fine-tune on 16 GPUs: ZeRO-3 over two 8-GPU RDMA nodes
    "llama70_full": Workload(model="llama3-70b", method="full", gpu_count=16),
    # QLoRA restricted to T4 (no BF16, no FlashAttention-2)
    "t4_qlora": Workload(model="qwen2-7b", method="qlora", gpu_include=["T4"]),
}


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog(REPO_ROOT / "knowledge")


@pytest.fixture(scope="session")
def plans(catalog: Catalog) -> dict[str, dict[str, Any]]:
    return {name: plan_to_dict(plan(w, catalog, today=TODAY)) for name, w in WORKLOADS.items()}


def index_of(p: dict[str, Any], instance_type: str) -> int:
    return next(i for i, c in enumerate(p["candidates"]) if c["instance_type"] == instance_type)


def pick(p: dict[str, Any], cloud: str) -> dict[str, Any]:
    c: dict[str, Any] = p["candidates"][index_of(p, p["picks"][cloud])]
    return c
