"""What a post states about a run the engine cannot size, read by the causes that need no size
(service/planner/causes/general.py for training, general_serve.py for a server): the signs, a found cause with the
verdict it gives, and a cause's constructor."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from service.catalog.schema import GpuSpec
from service.frame import Setup
from service.planner.causes.types import Cause, Fix

# What was seen, as the general causes group it
GeneralKind = str  # oom | memory | slow | scaling | util | host_oom | error
RL_OBJECTIVES = frozenset({"dpo", "ppo", "grpo", "kto", "orpo", "rlhf", "simpo"})
NODE_GPUS = 8
RDMA_GBPS = 100.0  # a link between nodes below this is not RDMA-class
COMPUTE_GAP = 1.5  # compute this many times the other setup's explains its being that much faster
COMPUTE_SAME = 1.25
MEMORY = ("oom", "memory", "error")  # a run that ran out of memory, or failed (an error is most often memory)
HANG_MEMORY_GB = 4.0  # a multi-GPU run stuck at this little memory has not started computing


@dataclass(frozen=True)
class Signs:
    """What the post states about the run, for the causes that need no size."""

    kind: GeneralKind
    serving: bool
    asked: Setup
    others: tuple[Setup, ...] = ()
    gpu: GpuSpec | None = None
    other_gpus: tuple[GpuSpec | None, ...] = ()  # the card of each contrasted setup, where the catalog has it

    @property
    def engine(self) -> str | None:
        return next((s.knobs.engine for s in (self.asked, *self.others) if s.knobs.engine), None)

    def other_methods(self) -> set[str]:
        return {s.method for s in self.others if s.method}

    def gpus(self) -> int:
        hw = self.asked.hardware
        return hw.gpu_count or (hw.nodes or 1) * (hw.gpus_per_node or 0) or 1


@dataclass(frozen=True)
class Found:
    cause: Cause
    verdict: bool | None  # the observation is what the setup gives (None: this cause does not decide it)


Rule = Callable[[Signs], "Found | None"]


def cause_of(code: str, fix: str | None = None, setting: str | None = None, **detail: float) -> Cause:
    return Cause(code=f"g_{code}", fix=Fix(code=f"g_{fix or code}", setting=setting) if fix or setting else None,
                 detail=dict(detail))
