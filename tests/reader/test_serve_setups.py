"""A server post's setups and question: two TP degrees, two engines or two cards, each with what it did."""

from __future__ import annotations

import pytest

from service.reader.serve_setups import read_serve


@pytest.mark.parametrize(("text", "asked", "setups"), [
    ("qwen2.5-72b tp4能跑，tp8就oom，为什么", "oom", [(4, None, "worked"), (8, None, "oom")]),
    ("HF transformers能跑llama3.1-8b，vllm就OOM", "oom", [(None, "hf", "worked"), (None, "vllm", "oom")]),
    ("lmdeploy tp=4 llama2-70B 显存缓慢增长 OOM", "growth", [(4, "lmdeploy", "oom")]),
    ("vllm部署qwen2.5-7b，4090上 9 tokens/s 正常吗", "slow", [(None, "vllm", "unknown")]),
    ("TP8 vs TP4 for llama-3-70b on H800 with vllm, which is faster?", "compare", [(8, None, "unknown"),
                                                                                   (4, None, "unknown")]),
    ("vLLM on A100 serving Qwen2.5-32B-FP8, why does FP8 run on A100?", "why_runs", [(None, "vllm", "worked")]),
])
def test_setups_and_question(text: str, asked: str, setups: list[tuple[int | None, str | None, str]]) -> None:
    r = read_serve(text)
    assert r.asked == asked
    assert [(s.tp, s.engine, s.outcome) for s in r.setups] == setups


def test_two_cards_are_two_setups() -> None:
    text = "A100上能跑，4090上就OOM"
    r = read_serve(text, ((0, "A100-80G-SXM"), (text.index("4090"), "RTX-4090")))
    assert [(s.gpu, s.outcome) for s in r.setups] == [("A100-80G-SXM", "worked"), ("RTX-4090", "oom")]


def test_flags_and_speed() -> None:
    r = read_serve("vllm --gpu-memory-utilization 0.95 --enforce-eager --pipeline-parallel-size 2, 12 tok/s")
    assert (r.mem_fraction, r.enforce_eager, r.pp, r.tokens_per_s) == (0.95, True, 2, 12.0)
