"""Host RAM killed while N processes load a model: each loads a full CPU copy, N x the weights, said first with
the machine's RAM as the post states it; the machine named by its instance gives the GPU and the count."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from service.questions.turn import Turn


def test_n_ranks_each_loading_a_copy_is_the_cause(ask: Callable[..., Turn]) -> None:
    t = ask("Host OOM (dmesg killed) while loading Qwen2-72B shards with device_map=auto on GT4.41XLARGE948 — "
            "948G RAM, 8 ranks via torchrun.")
    assert t.answer is not None
    a = t.answer.public()
    assert (a["gpu"], a["gpu_count"], a["ranks"]) == ("A100-40G-SXM", 8, 8)
    top = a["diagnosis"]["causes"][0]  # the cause model: 8 bf16 copies of the weights on the CPU
    assert top["code"] == "rank_copies" and top["detail"]["ranks"] == 8
    assert top["explains"]["value"] == pytest.approx(8 * top["detail"]["copy_gib"], rel=0.01)
    first = t.text.splitlines()[0]
    assert "8 processes" in first and f"{top['explains']['value']:,.0f} GiB" in first and "948 GB of RAM" in first


def test_a_full_fine_tune_with_offload_keeps_the_offload_cause(ask: Callable[..., Turn]) -> None:
    t = ask("8卡A100 全参微调 qwen2-7b zero3 offload 内存爆了 进程被kill，机器内存 512G")
    assert t.answer is not None and t.answer.public().get("host_copies_gib") is None
    assert "offload" in t.text.splitlines()[0]  # the cause model: offload keeps the optimizer states in RAM
