"""The cause model's typed values: a figure with its unit, a fix, a cause, a diagnosis. Codes, numbers and flags
only: the phrase tables (prompts/questions/diagnose.yaml) write the words."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# GiB of memory, seconds, hours, milliseconds, tokens per second, tokens, a ratio (times slower / faster)
Unit = Literal["GiB", "s", "h", "ms", "tok/s", "tokens", "x", "replicas"]
# What the user saw, as the cause model groups it
Observed = Literal["train_oom", "train_memory", "train_slow", "scaling", "host_oom", "serve_oom", "serve_memory",
                   "serve_slow"]
# What a figure the user gave most likely was, when it is impossible for the setup
Misreading = Literal["total_not_per_card", "host_not_gpu", "mb_not_gb", "percent_over_100", "whole_run",
                     "aggregate_not_stream", "card_smaller"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Quantity(_Frozen):
    value: float
    unit: Unit

    @classmethod
    def of(cls, value: float, unit: Unit, digits: int = 2) -> Quantity:
        return cls(value=round(float(value), digits), unit=unit)


class Fix(_Frozen):
    """The change that removes a cause: its code (the phrase table's words), the setting as people write it in a
    config or on a command line, and the engine's figure after it (per-GPU GiB, tok/s, hours ...)."""

    code: str
    setting: str | None = Field(default=None, description="the flag or config line, e.g. '--max-model-len 16384'")
    fixed: Quantity | None = Field(default=None, description="the figure with the fix applied")
    fits: bool | None = Field(default=None, description="memory fixes: the fixed setup fits the card")


class Cause(_Frozen):
    """One candidate cause of an observation, computed from the setup."""

    code: str
    applies: bool = True
    explains: Quantity | None = Field(default=None, description="how much of the observed gap it explains")
    stated: bool = Field(default=True, description="it rests on what the user stated (False: on a default the "
                         "engine assumed, e.g. an unstated micro-batch)")
    fix: Fix | None = None
    detail: dict[str, float] = Field(default_factory=dict, description="the figures its sentence names (sequence "
                                     "length, vocabulary, ranks, the card's memory ...)")

    @classmethod
    def no(cls, code: str) -> Cause:
        """The cause does not apply to this setup."""
        return cls(code=code, applies=False)


class Impossible(_Frozen):
    """A figure the setup cannot produce (200 GB in use on a 24 GB card), and what it most likely was."""

    seen: Quantity
    limit: Quantity
    misreading: Misreading


class Diagnosis(_Frozen):
    """The causes of one observation, ranked by the gap each explains; the engine's figure beside the user's."""

    observed_kind: Observed
    causes: list[Cause] = Field(default_factory=list, description="the causes that apply, the top first")
    expected: Quantity | None = Field(default=None, description="the engine's figure for the setup as stated")
    observed: Quantity | None = Field(default=None, description="the user's own figure")
    reference: Quantity | None = Field(default=None, description="more GPUs no faster: the engine's figure for the "
                                       "setup they compare with (one node, one card)")
    reference_gpus: int | None = None
    verdict: bool | None = Field(default=None, description="the observation is what the setup gives")
    ask: str | None = Field(default=None, description="the one unstated figure that would settle it (a slot)")
    impossible: Impossible | None = None

    @property
    def top(self) -> Cause | None:
        return self.causes[0] if self.causes else None
