"""Host RAM causes: N ranks each loading the model, and offload's states."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from service.planner.causes import host
from service.planner.causes.cases import TrainCase
from service.sizing.params import count_params
from service.sizing.types import GIB

Make = Callable[..., TrainCase]


def test_each_rank_loads_a_copy(train: Make) -> None:
    case = train("Qwen2-72B", "A100-40G-SXM", 8, method="lora", knobs={"strategy": "device_map"},
                 hardware={"host_ram_gb": 948})
    c = host.rank_copies(case)
    one = 2 * count_params(case.model).total / GIB
    assert c.applies and c.detail["ranks"] == 8 and c.detail["copy_gib"] == pytest.approx(one, abs=0.1)
    assert c.explains is not None and c.explains.value == pytest.approx(8 * one, rel=0.01)
    assert c.fix is not None and c.fix.fits  # one copy fits the 948 GB machine


def test_zero3_loads_once(train: Make) -> None:
    case = train("Qwen2-72B", "A100-40G-SXM", 8, method="full", zero_stage=3, knobs={"strategy": "zero"})
    assert not host.rank_copies(case).applies
    assert not host.rank_copies(train("Qwen2-7B", "A10", 1, method="lora")).applies  # one process


def test_offload_keeps_the_states_in_host_ram(train: Make) -> None:
    case = train("Qwen2-7B", "A100-40G-SXM", 8, method="full", zero_stage=3, knobs={"offload": True})
    c = host.offload_host(case)
    assert c.applies and c.explains is not None
    assert c.explains.value == pytest.approx(case.memory().host_ram_gib, rel=0.01)
    assert not host.offload_host(train("Qwen2-7B", "A100-40G-SXM", 8, method="full", zero_stage=3)).applies
