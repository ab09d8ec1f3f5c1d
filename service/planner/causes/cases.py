"""The cases the causes read: a training run (`TrainCase`) or a server (`ServeRun`) as the engine sizes it, with
the knobs, hardware and what the user saw as the question frame holds them (service/frame.py).

A case keeps what the user stated apart from what the engine assumed (`stated`): a cause that rests on an
assumed setting (an unstated micro-batch, the framework's default checkpointing) is ranked below one the user's
own words give, and the answer asks for the one figure that would settle it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from service.catalog.schema import GpuSpec, ModelSpec
from service.frame import Hardware, Knobs, Load, Outcome
from service.sizing.memory import estimate_memory
from service.sizing.serving.engines import engine_memory
from service.sizing.serving.types import EngineMemory, ServingSetup
from service.sizing.throughput import Cluster, training_time
from service.sizing.types import MemoryBreakdown, TrainSetup
from service.sizing.verdict import card_capacity_gib

RL_STAGES = frozenset({"grpo", "ppo"})
PREFERENCE_STAGES = frozenset({"dpo", "kto", "orpo", "simpo"})
FULL_METHODS = frozenset({"full", "pretrain", "freeze"})
DEFAULT_NODE_GPUS = 8


@dataclass(frozen=True)
class TrainCase:
    """One training run: the model and card, GPUs in all over `nodes`, the per-GPU setup (stated settings, the
    framework's defaults for the rest), the training stage, the frame's knobs and hardware, and what was seen."""

    model: ModelSpec
    gpu: GpuSpec
    gpus: int
    setup: TrainSetup
    stated: frozenset[str] = frozenset()
    stage: str = "sft"
    knobs: Knobs = field(default_factory=Knobs)
    hardware: Hardware = field(default_factory=Hardware)
    seen: Outcome = field(default_factory=Outcome)
    tokens: float = 0.0  # tokens of the run the estimate times (one epoch x epochs)
    nodes: int = 1
    time_seq: int | None = None  # the mean sequence the estimate times (samples shorter than the cutoff: unpadded)

    @property
    def capacity_gib(self) -> float:
        """What PyTorch can use on one card (its OOM message's 'total capacity')."""
        return card_capacity_gib(self.gpu)

    @property
    def gpus_per_node(self) -> int:
        return max(1, self.gpus // max(1, self.nodes))

    def memory(self, **change: Any) -> MemoryBreakdown:
        """The per-GPU memory of this setup, or of it with `change` applied (a TrainSetup field each)."""
        return estimate_memory(self.model, replace(self.setup, **change) if change else self.setup)

    @cached_property
    def per_gpu_gib(self) -> float:
        return self.memory().per_gpu_gib

    def states_gib(self, **change: Any) -> float:
        """Weights, gradients and optimizer states per GPU (what sharding divides)."""
        m = self.memory(**change)
        return m.weights_gib + m.gradients_gib + m.optimizer_gib

    def rate(self, gpus: int | None = None, rdma: bool | None = None, network_gbps: float | None = None,
             **change: Any) -> float:
        """Tokens/s of all GPUs together (the engine's steady rate), on `gpus` cards and the link given."""
        n = gpus or self.gpus
        nodes = max(1, self.nodes if gpus is None else -(-n // self.gpus_per_node))
        link_rdma = (self.hardware.interconnect != "ethernet") if rdma is None else rdma
        setup = replace(self.setup, n_gpus=n, **change)
        if self.time_seq and "seq_len" not in change:
            setup = replace(setup, seq_len=min(setup.seq_len, self.time_seq))
        cl = Cluster(gpus_per_node=max(1, n // nodes), nodes=nodes, rdma=link_rdma,
                     network_gbps=network_gbps if network_gbps is not None else self.hardware.network_gbps)
        t = training_time(self.model, self.gpu, setup, max(1.0, self.tokens), n, cluster=cl)
        return t.steady_tokens_per_s or t.throughput_tokens_per_s

    def is_stated(self, *knobs: str) -> bool:
        return all(k in self.stated for k in knobs)


@dataclass(frozen=True)
class ServeRun:
    """One server: the model, the card and the engine as named (`engine`; `setup.engine` is the policy it is sized
    with: TGI, MindIE and Xinference as vLLM), the frame's knobs, hardware, load and what was seen."""

    model: ModelSpec
    gpu: GpuSpec
    engine: str
    setup: ServingSetup
    stated: frozenset[str] = frozenset()
    knobs: Knobs = field(default_factory=Knobs)
    hardware: Hardware = field(default_factory=Hardware)
    seen: Outcome = field(default_factory=Outcome)
    load: Load = field(default_factory=Load)
    host_bw_gb_s: float = 50.0  # the host's memory bandwidth as a CPU-offloaded decode sees it

    @cached_property
    def mem(self) -> EngineMemory:
        return engine_memory(self.model, self.gpu, self.setup)

    def mem_with(self, **change: Any) -> EngineMemory:
        return engine_memory(self.model, self.gpu, replace(self.setup, **change))

    @property
    def card_gib(self) -> float:
        return self.gpu.memory_gib

    def is_stated(self, *knobs: str) -> bool:
        return all(k in self.stated for k in knobs)
