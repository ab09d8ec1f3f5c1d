"""The cause model over the synthetic catalog (tests/fixtures/mini_knowledge): Qwen2-7B, Qwen2.5-14B, Qwen2-72B
(dense), Qwen3-30B-A3B (MoE), DeepSeek-V2-Lite (MLA), Qwen2.5-VL-7B (vision) on A10, L20, A100-40G, H800, V100,
RTX 4090 and the Ascend 910B2. A price or model fix in knowledge/ moves none of these tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from service.catalog.loader import Catalog, load_catalog
from service.catalog.queries import resolve_gpu
from service.frame import Hardware, Knobs, Load, Outcome, Setup
from service.planner.causes.build import serve_run, train_case
from service.planner.causes.cases import ServeRun, TrainCase
from service.workload import Workload

MINI = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "mini_knowledge"


@pytest.fixture(scope="session")
def mini() -> Catalog:
    return load_catalog(MINI)


@pytest.fixture(scope="session")
def train(mini: Catalog) -> Callable[..., TrainCase]:
    """train("Qwen2-7B", "RTX-4090", 8, method="lora", knobs={...}, hardware={...}, seen={...}) -> the case."""

    def make(model: str, gpu: str, gpus: int = 1, knobs: dict[str, Any] | None = None,
             hardware: dict[str, Any] | None = None, seen: dict[str, Any] | None = None, **w: Any) -> TrainCase:
        setup = Setup(knobs=Knobs(**(knobs or {})), hardware=Hardware(gpu_count=gpus, **(hardware or {})),
                      outcome=Outcome(**(seen or {})))
        case, _ = train_case(mini, Workload(model=model, **w), resolve_gpu(gpu, mini.gpus)[0], gpus, setup)
        return case

    return make


@pytest.fixture(scope="session")
def serve(mini: Catalog) -> Callable[..., ServeRun]:
    """serve("Qwen2-7B", "A10", engine="vllm", knobs={...}, seen={...}, load={...}) -> the server."""

    def make(model: str, gpu: str, gpus: int = 1, engine: str = "vllm", knobs: dict[str, Any] | None = None,
             seen: dict[str, Any] | None = None, load: dict[str, Any] | None = None) -> ServeRun:
        setup = Setup(knobs=Knobs(engine=engine, **(knobs or {})), hardware=Hardware(gpu_count=gpus),
                      outcome=Outcome(**(seen or {})))
        return serve_run(mini, model, resolve_gpu(gpu, mini.gpus)[0], setup, Load(**(load or {})))

    return make
