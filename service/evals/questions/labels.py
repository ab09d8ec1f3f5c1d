"""What a labelled question says beyond its type and slots: the question frame as a careful reader sees it (the task,
what is asked, the other setups the post describes, what it leaves unsaid) and the facts a right answer must show
in its first lines (`answer:`). The vocabulary is the runtime frame's (service/frame.py), so a label and a reading
compare field by field."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from service.frame import ASKED, TASKS

# Figures an answer can be checked on: the typed answer's facts (service/spine answer `facts()`), by these names.
FIGURES = ("weights_gib", "per_gpu_gib", "total_gib", "hours", "cny", "cny_per_month", "cny_per_hour",
           "cny_per_gpu_hour", "concurrency", "tokens_per_s", "ttft_ms", "max_params_b", "max_seq_len",
           "max_micro_batch", "kv_tokens", "gpus_per_replica", "replicas", "vcpu", "ram_gib", "break_even_hours")
Range = tuple[float, float]


class SetupLabel(BaseModel):
    """Another setup the post describes ('TP4 works, TP8 OOMs'): its role, its outcome and the slots in which it
    differs from the labelled (asked) setup in `slots`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["asked", "worked", "failed", "baseline", "alternative"]
    outcome: Literal["worked", "oom", "error", "slow", "unknown"] = "unknown"
    slots: dict[str, Any] = Field(default_factory=dict)


class FrameLabel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    task: Literal["train", "serve", "both", "none"]
    asked: str
    setups: list[SetupLabel] = Field(default_factory=list)
    unknowns: list[str] = Field(default_factory=list)

    @field_validator("task")
    @classmethod
    def _task(cls, v: str) -> str:
        if v not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}")
        return v

    @field_validator("asked")
    @classmethod
    def _asked(cls, v: str) -> str:
        if v not in ASKED:
            raise ValueError(f"asked must be one of {', '.join(ASKED)}")
        return v


class AnswerFacts(BaseModel):
    """What a right answer shows, checked on its first lines and its typed answer.

    first_line: any one of these substrings (case-insensitive) opens the answer's first line ("不能", "no").
    verdict:    as `verdict:` (fits, expected, gpus_needed, winner, answer, ...), settled by the thread or a fact.
    count:      [lo, hi] GPUs in all that the answer names (a pick, a count needed, a deployment).
    figures:    {name: [lo, hi]} for the names in FIGURES.
    mentions:   each substring appears in the answer (case-insensitive; "a|b" means either).
    not_mentions: none of these appears in the first two lines (an answer to another question)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    first_line: list[str] = Field(default_factory=list)
    verdict: dict[str, Any] = Field(default_factory=dict)
    count: Range | None = None
    figures: dict[str, Range] = Field(default_factory=dict)
    mentions: list[str] = Field(default_factory=list)
    not_mentions: list[str] = Field(default_factory=list)

    @field_validator("figures")
    @classmethod
    def _figures(cls, v: dict[str, Range]) -> dict[str, Range]:
        unknown = sorted(set(v) - set(FIGURES))
        if unknown:
            raise ValueError(f"unknown figure(s) {', '.join(unknown)}; use {', '.join(FIGURES)}")
        for name, (lo, hi) in v.items():
            if lo > hi:
                raise ValueError(f"figure {name}: lo {lo} is above hi {hi}")
        return v

    @field_validator("count")
    @classmethod
    def _count(cls, v: Range | None) -> Range | None:
        if v is not None and (v[0] > v[1] or v[0] < 0):
            raise ValueError("count must be [lo, hi] with 0 <= lo <= hi")
        return v

    @property
    def empty(self) -> bool:
        return not (self.first_line or self.verdict or self.count or self.figures or self.mentions
                    or self.not_mentions)
