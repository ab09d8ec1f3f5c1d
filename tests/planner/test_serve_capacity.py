"""Capacity for serving: the largest model vLLM starts per weight dtype, the longest context the pool holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from service.catalog.loader import Catalog, load_catalog
from service.planner.questions.serve_capacity import serve_capacity
from service.planner.serving_inference import inference
from service.serving_workload import ServingWorkload


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(Path(__file__).resolve().parents[2] / "knowledge")


def _starts(cat: Catalog, model: str, gpu: str, n: int, weights: Any) -> bool:
    return inference(ServingWorkload(model=model, gpu=gpu, gpus=n, weights=weights), cat).starts


@pytest.mark.parametrize(("gpu", "count"), [("RTX-4090", 1), ("A100-80G", 1), ("L20", 2)])
def test_the_largest_model_starts_and_the_next_does_not(catalog: Catalog, gpu: str, count: int) -> None:
    out = serve_capacity(catalog, gpu, count)
    rows = {r["weights"]: r for r in out["rows"]}
    assert "bf16" in rows and "int4" in rows
    for dtype, row in rows.items():
        assert row["largest"] is not None
        assert _starts(catalog, row["largest"]["model"], gpu, count, dtype)
        if row["smallest_not_starting"]:
            assert not _starts(catalog, row["smallest_not_starting"]["model"], gpu, count, dtype)
            assert row["smallest_not_starting"]["params_b"] > row["max_params_b"]
    assert rows["int4"]["max_params_b"] > rows["bf16"]["max_params_b"]  # 4-bit weights hold a larger model
    assert out["max_params_b"] == max(r["max_params_b"] for r in rows.values())


def test_more_cards_serve_a_larger_model(catalog: Catalog) -> None:
    one = serve_capacity(catalog, "L20", 1, weights="bf16")["max_params_b"]
    four = serve_capacity(catalog, "L20", 4, weights="bf16")["max_params_b"]
    assert four > one


def test_the_longest_context_is_what_the_pool_holds(catalog: Catalog) -> None:
    out = serve_capacity(catalog, "A100-80G", 1, "context", model="DeepSeek-R1-Distill-Qwen-32B")
    r = inference(ServingWorkload(model="DeepSeek-R1-Distill-Qwen-32B", gpu="A100-80G", gpus=1), catalog)
    assert out["starts"] and out["max_seq_len"] == r.max_model_len_fits < 131_072  # less than its 128k context
    two = serve_capacity(catalog, "A100-80G", 2, "context", model="DeepSeek-R1-Distill-Qwen-32B")["max_seq_len"]
    assert out["max_seq_len"] < two  # a second card holds more KV cache


def test_a_stated_context_is_the_context_the_largest_model_serves(catalog: Catalog) -> None:
    # issue 38: '4090能部署多大的模型 32k上下文' was answered at the default lengths (contexts of 4,096)
    plain = {r["weights"]: r for r in serve_capacity(catalog, "RTX-4090", 1)["rows"]}
    long = serve_capacity(catalog, "RTX-4090", 1, seq_len=32_768)
    assert long["seq_len"] == 32_768
    for row in long["rows"]:
        got = row["largest"]
        assert got is not None and got["max_model_len"] >= 32_768
        assert row["max_params_b"] <= plain[row["weights"]]["max_params_b"]  # a longer context holds no larger model
        started = inference(ServingWorkload(model=got["model"], gpu="RTX-4090", gpus=1, weights=row["weights"],
                                            max_model_len=32_768), catalog)
        assert started.starts
