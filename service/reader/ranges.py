"""What each figure a finder reads may be, and the note when it is not: a figure outside its slot's range is
refused with a note in the user's language ("“10^6 张”超出可规划范围（最多 64 节点）"), never replaced by a
piece of it ('6' of '10^6') nor dropped without a word.

A finder that has read a figure for a slot (its words say which: '张卡', 'epochs', 'tokens') checks it here; one
outside the range is appended to the caller's `refused` list and blanked, so no other finder reads it again. The
ranges are the schemas' (service/workload.py, service/serving_workload.py) or narrower where the engine plans less:
GPU counts up to 64 nodes of 8.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from service.workload import MIN_DATASET_GB, MIN_DEADLINE_HOURS, MIN_EPOCHS, MIN_PARAMS_B, MIN_TOKENS

MAX_NODES = 64  # the planner's largest cluster (service/planner/strategy.py NODE_STEPS)
GPUS_PER_NODE = 8
_MARKS = str.maketrans("\x00\x01", "  ")  # blanked names and figures, marked GPU names


@dataclass(frozen=True)
class Range:
    low: float
    high: float
    below: tuple[str, str]  # (en, zh): the limit said when a figure is under it
    above: tuple[str, str]
    whole: bool = False  # the figure is a count: 1.5 GPUs is not one


RANGES: dict[str, Range] = {
    "gpu_count": Range(1, MAX_NODES * GPUS_PER_NODE, ("at least 1 GPU", "至少 1 张"),
                       (f"at most {MAX_NODES} nodes, {MAX_NODES * GPUS_PER_NODE} GPUs",
                        f"最多 {MAX_NODES} 节点，{MAX_NODES * GPUS_PER_NODE} 张"), whole=True),
    "tokens": Range(MIN_TOKENS, 1e15, ("at least 1 token", "至少 1 token"), ("at most 10^15 tokens", "最多 10^15 tokens")),
    "avg_tokens_per_sample": Range(1, 1e7, ("at least 1 token a sample", "每条至少 1 token"),
                                   ("at most 10^7 tokens a sample", "每条最多 10^7 tokens")),
    "samples": Range(1, 1e12, ("at least 1 sample", "至少 1 条"), ("at most 10^12 samples", "最多 10^12 条")),
    "epochs": Range(MIN_EPOCHS, 1000, ("at least 0.01 epochs", "至少 0.01 轮"), ("at most 1000 epochs", "最多 1000 轮")),
    "budget_cny": Range(1, 1e10, ("at least ¥1", "至少 ¥1"), ("at most ¥10^10", "最多 ¥10^10")),
    "deadline_hours": Range(MIN_DEADLINE_HOURS, 24 * 365 * 5, ("at least 36 seconds", "至少 36 秒"),
                            ("at most 5 years", "最多 5 年")),
    "seq_len": Range(16, 1_048_576, ("at least 16 tokens", "至少 16 tokens"),
                     ("at most 1M tokens", "最多 1M tokens")),
    "params_b": Range(MIN_PARAMS_B, 5000, ("at least 7M parameters", "至少 700 万参数"),
                      ("at most 5000B parameters", "最多 5000B 参数")),
    "dataset_gb": Range(MIN_DATASET_GB, 1e7, ("at least 1 KB", "至少 1 KB"), ("at most 10 PB", "最多 10 PB")),
    "lora_rank": Range(1, 4096, ("at least rank 1", "至少为 1"), ("at most rank 4096", "最多 4096"), whole=True),
    "concurrency": Range(1, 1_000_000, ("at least 1 request in flight", "至少 1 个并发"),
                         ("at most 10^6 in flight", "最多 10^6 并发")),
    "request_rate": Range(1e-6, 1_000_000, ("above 0 requests a second", "须大于 0"),
                          ("at most 10^6 requests a second", "最多每秒 10^6 个请求")),
    "input_tokens": Range(1, 10_485_760, ("at least 1 token", "至少 1 token"), ("at most 10M tokens", "最多 10M tokens")),
    "output_tokens": Range(1, 1_048_576, ("at least 1 token", "至少 1 token"), ("at most 1M tokens", "最多 1M tokens")),
    "max_model_len": Range(16, 10_485_760, ("at least 16 tokens", "至少 16 tokens"),
                           ("at most 10M tokens", "最多 10M tokens")),
    "ttft_ms": Range(1e-3, 3_600_000, ("above 0 ms", "须大于 0 毫秒"), ("at most 1 hour", "最多 1 小时")),
    "tpot_ms": Range(1e-3, 600_000, ("above 0 ms", "须大于 0 毫秒"), ("at most 10 minutes", "最多 10 分钟")),
}


@dataclass(frozen=True)
class Refused:
    """A figure read for a slot and outside what can be planned, as the message wrote it."""

    slot: str
    said: str
    value: float

    @property
    def side(self) -> Literal["below", "above", "whole"]:
        r = RANGES[self.slot]
        if math.isnan(self.value) or self.value < r.low:
            return "below"
        if self.value > r.high:
            return "above"
        return "whole"

    def note(self, lang: str) -> str:
        zh = lang == "zh"
        r = RANGES[self.slot]
        side = self.side
        if side == "whole":
            return (f"“{self.said}”不是整数，已忽略。" if zh else f"'{self.said}' is not a whole number and was ignored.")
        limit = (r.below if side == "below" else r.above)[1 if zh else 0]
        if zh:
            return f"“{self.said}”{'低于' if side == 'below' else '超出'}可规划范围（{limit}），已忽略。"
        return f"'{self.said}' is {'below' if side == 'below' else 'beyond'} what can be planned ({limit}); ignored."


def in_range(slot: str, value: float) -> bool:
    r = RANGES[slot]
    return r.low <= value <= r.high and (not r.whole or value == int(value))


def check(slot: str, value: float, said: str, refused: list[Refused] | None) -> bool:
    """True when the figure is within its slot's range; otherwise it is noted in `refused` (when given)."""
    if in_range(slot, value):
        return True
    if refused is not None:
        refused.append(Refused(slot, " ".join(said.translate(_MARKS).split()), value))
    return False
