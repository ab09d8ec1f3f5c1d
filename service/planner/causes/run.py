"""The cause model's entry points for the diagnose question type: the case built from the routed workload and the
frame's setup, the observation's candidates run and ranked (rank.py)."""

from __future__ import annotations

from typing import Literal

from service.catalog.loader import Catalog
from service.catalog.schema import GpuSpec
from service.frame import Load, Setup
from service.planner.causes import rank
from service.planner.causes.build import serve_run, train_case
from service.planner.causes.types import Diagnosis
from service.workload import Workload

TrainKind = Literal["oom", "memory", "hours", "util", "host_oom", "slow", "scaling"]
ServeKind = Literal["oom", "growth", "memory", "slow"]


def train_diagnosis(cat: Catalog, w: Workload, gpu: GpuSpec, count: int, setup: Setup, kind: TrainKind,
                    observed_tps: float | None = None, data_known: bool = True,
                    expected_tps: float | None = None) -> Diagnosis:
    """The causes of what a training run did. `observed_tps`: the user's rate (theirs, or their hours over the
    data), all GPUs together."""
    case, _ = train_case(cat, w, gpu, count, setup)
    if kind == "oom":
        return rank.train_memory_diagnosis(case, "train_oom")
    if kind == "memory":
        return rank.train_memory_diagnosis(case, "train_memory")
    if kind == "host_oom":
        return rank.host_diagnosis(case)
    if kind == "scaling":
        return rank.scaling_diagnosis(case)
    return rank.train_slow_diagnosis(case, w.avg_tokens_per_sample, observed_tps, data_known, expected_tps)


def serve_diagnosis(cat: Catalog, model: str, gpu: GpuSpec, setup: Setup, load: Load, kind: ServeKind) -> Diagnosis:
    """The causes of what a server did: it OOMs or does not start, holds memory, or is slow."""
    run = serve_run(cat, model, gpu, setup, load)
    if kind == "memory":
        return rank.serve_memory_diagnosis(run, "serve_memory")
    if kind == "slow":
        return rank.serve_slow_diagnosis(run)
    return rank.serve_memory_diagnosis(run, "serve_oom")
