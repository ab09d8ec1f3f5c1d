"""llm-d-planner's KV capacity formula as a peer on the serving rows (service/evals/peers.py)."""

from __future__ import annotations

import pytest

from service.catalog.loader import Catalog
from service.catalog.queries import resolve_gpu, resolve_model
from service.evals.peers import llmd_kv_tokens


def test_the_peer_formula_on_llama3_8b(catalog: Catalog) -> None:
    # 80 GiB x 0.9 - 14.96 weights - 1.89 (LlamaForCausalLM) - 0.27 (TP1) = 54.88 GiB over 131,072 B a token
    m = resolve_model("Llama-3-8B", catalog.models)
    h100 = resolve_gpu("H100", catalog.gpus)[0]
    assert llmd_kv_tokens(m, h100, 1, 1, 0.9, 14.96) == pytest.approx(54.88 * 1024**3 / 131_072, rel=1e-3)
    # TP2: its 2.10 GiB non-PyTorch constant, half the weights and half a token's bytes per GPU
    assert llmd_kv_tokens(m, h100, 2, 1, 0.9, 7.48) == pytest.approx(
        (80 * 0.9 - 7.48 - 1.89 - 2.10) * 1024**3 / 65_536, rel=1e-3)


def test_the_peer_counts_mla_latents(catalog: Catalog) -> None:
    # MLA: layers x (kv_lora_rank + rope) x 2 B = 61 x 576 x 2 = 70,272 B a token, divided over the TP ranks
    m = resolve_model("DeepSeek-R1", catalog.models)
    h20 = resolve_gpu("H20", catalog.gpus)[0]
    got = llmd_kv_tokens(m, h20, 8, 1, 0.9, 79.4)
    assert got == pytest.approx((96 * 0.9 - 79.4 - 1.93 - 2.10) * 1024**3 / (70_272 / 8), rel=1e-3)
