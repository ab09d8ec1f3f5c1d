"""The figure guard (service/reader/figures.py): a number in the LLM's frame must be one the user wrote, as written or
in a unit the frame converts to."""

from __future__ import annotations

import pytest

from service.reader.figures import drop_unstated, is_stated, stated_numbers
from service.reader.llm_schema import FrameDraft

# (what the user wrote, a figure the frame may hold, stated?)
CASES: list[tuple[str, float, bool]] = [
    ("两张4090", 2, True),  # a Chinese numeral
    ("两张4090", 4090, True),  # the digits of a name
    ("两张4090", 24, False),  # the card's memory, which the user did not write
    ("Qwen2-7B", 7, True),  # a size inside a model name
    ("10万条数据", 100000, True),  # 万
    ("100k samples", 100000, True),  # k
    ("4k context", 4096, True),  # binary thousands for a context
    ("3天内", 72, True),  # days -> hours
    ("一周内跑完", 168, True),  # a week -> hours
    ("2机8卡", 16, True),  # the product of neighbours
    ("预算1.5万", 15000, True),  # decimal 万
    ("70亿参数", 7, True),  # 亿 parameters -> billions
    ("TTFT 2s", 2000, True),  # seconds -> ms
    ("单卡", 1, True),  # 单 = one
    ("eight GPUs", 8, True),  # an English number word
    ("预算3000", 5000, False),  # a budget the LLM made up
    ("Qwen2-7B lora 要多少显存", 123.4, False),  # the answer's figure, invented
    ("4090能跑吗", 1, False),  # no count said
]


@pytest.mark.parametrize(("text", "value", "stated"), CASES)
def test_a_figure_is_stated_when_the_user_wrote_it(text: str, value: float, stated: bool) -> None:
    assert is_stated(value, stated_numbers([text])) is stated


def test_drop_unstated_drops_nested_figures_and_says_where() -> None:
    draft = FrameDraft.model_validate({
        "task": "train", "asked": "fits", "asked_setup": 1,
        "setups": [{"models": [{"name": "Qwen2-7B", "params_b": 7}]},
                   {"models": [{"name": "Qwen2-72B", "params_b": 72}], "hardware": {"gpu_count": 8},
                    "outcome": {"status": "oom", "memory_gb": 79.5}}],
        "load": {"concurrency": 50}})
    kept, dropped = drop_unstated(draft, ["8张A800跑Qwen2-72B OOM了，7B可以"])
    assert dropped == [("setups[1].outcome.memory_gb", 79.5), ("load.concurrency", 50.0)]
    assert kept.setups[1].outcome is not None and kept.setups[1].outcome.memory_gb is None
    assert kept.load.concurrency is None and kept.setups[1].hardware.gpu_count == 8
    assert kept.asked_setup == 1  # an index into the setups, never a figure
    assert kept.setups[0].models[0].params_b == 7


def test_nothing_stated_nothing_dropped() -> None:
    draft = FrameDraft.model_validate({"task": "none", "asked": "other"})
    assert drop_unstated(draft, ["hello"]) == (draft, [])
