"""Fetcher building blocks: API GPU strings → our ids, region names, bounded backoff."""

from __future__ import annotations

import pytest

from service.catalog.fetchers.base import Backoff, RegionFetchError, ThrottledError, call_with_backoff, redact
from service.catalog.fetchers.gpu_names import resolve_gpu
from service.catalog.fetchers.regions import cloud_of_region, region_of


@pytest.mark.parametrize(
    ("texts", "memory", "hint", "expected"),
    [
        (["NVIDIA T4"], 16, None, "T4"),  # Tencent GpuType + GpuMemory
        (["NVIDIA T4"], 4, None, "T4"),  # vGPU slice reporting its slice memory
        (["", "4 颗 NVIDIA T4"], None, None, "T4"),  # no GpuType: Remark text
        (["NVIDIA A10"], 24, None, "A10"),  # "A10" is not "A100"
        (["NVIDIA A100"], 40, None, "A100-40G-SXM"),
        (["NVIDIA A100-SXM4-80GB"], None, None, "A100-80G-SXM"),  # memory in the name
        (["8 * NVIDIA A100"], None, "A100-40G-SXM", "A100-40G-SXM"),  # ambiguous, catalog row decides
        (["Tesla V100"], None, "V100-32G-SXM2", "V100-32G-SXM2"),  # JD: no memory, catalog row decides
        (["NVIDIA A800 80GB"], None, None, "A800-80G-SXM"),
        (["NVIDIA H800"], None, None, "H800-SXM"),
        (["NVIDIA H20"], 96, None, "H20"),
        (["NVIDIA L20"], 48, None, "L20"),
        (["Tesla P40"], None, None, "P40"),
        (["Tesla P4"], None, None, "P4"),  # "P4" is not "P40"
        (["NVIDIA A10G"], 24, None, "A10G"),  # "A10G" is not "A10"
        (["Tesla V100-PCIE-32GB"], None, None, "V100-32G-PCIE"),  # the text names the form factor
        (["NVIDIA A100"], 40, "A100-40G-PCIE", "A100-40G-PCIE"),  # the catalog row names it
        (["Tesla V100"], 16, None, "V100-16G-SXM2"),  # unnamed form: the SXM one the clouds sell
    ],
)
def test_gpu_strings_map_to_ids(texts: list[str], memory: float | None, hint: str | None, expected: str) -> None:
    assert resolve_gpu(texts, memory, hint).gpu_id == expected


@pytest.mark.parametrize(
    ("texts", "memory", "hint", "why"),
    [
        (["NVIDIA GPU"], 48, None, "unknown GPU model"),  # PNV5b's API text names no model
        (["Tesla K80"], None, None, "unknown GPU model"),
        (["Tesla V100S"], 32, None, "unknown GPU model"),
        (["NVIDIA H20-3e"], 141, None, "unknown GPU model"),  # not our H20 (96 GB)
        (["Tesla V100"], None, None, "ambiguous"),  # JD without a catalog row to decide
        (["8 * NVIDIA A100"], None, "T4", "ambiguous"),  # a hint of another family does not decide
        (["NVIDIA H200 PCIe"], 141, None, "no catalog id"),  # gpus.yaml has only the SXM H200
        (["NVIDIA H20"], 141, None, "no catalog id"),
        ([""], None, None, "no GPU model"),
    ],
)
def test_unmapped_gpu_strings_say_why(texts: list[str], memory: float | None, hint: str | None, why: str) -> None:
    got = resolve_gpu(texts, memory, hint)
    assert got.gpu_id is None and why in got.reason


@pytest.mark.parametrize(
    ("cloud", "entry", "region"),
    [
        ("tencent", "ap-guangzhou-6", "ap-guangzhou"),
        ("tencent", "ap-shanghai-fsi-1", "ap-shanghai-fsi"),
        ("tencent", "ap-beijing", "ap-beijing"),
        ("tencent", "Guangzhou-7", "ap-guangzhou"),  # shipped catalog writes doc names
        ("tencent", "Hong Kong 2", "ap-hongkong"),
        ("tencent", "Silicon Valley", "na-siliconvalley"),  # a city without a zone number
        ("tencent", "many zones", None),
        ("jdcloud", "cn-north-1a", "cn-north-1"),
        ("jdcloud", "cn-east-2", "cn-east-2"),
        ("jdcloud", "Beijing", None),
    ],
)
def test_region_of(cloud: str, entry: str, region: str | None) -> None:
    assert region_of(cloud, entry) == region  # type: ignore[arg-type]


def test_cloud_of_region() -> None:
    assert cloud_of_region("cn-north-1") == "jdcloud"
    assert cloud_of_region("ap-guangzhou") == "tencent"


def test_backoff_is_exponential_and_bounded() -> None:
    slept: list[float] = []
    calls = 0

    def throttled() -> None:
        nonlocal calls
        calls += 1
        raise ThrottledError("slow down")

    policy = Backoff(attempts=5, base_s=1, cap_s=4, sleep=slept.append)
    with pytest.raises(RegionFetchError, match="still throttled after 5 attempts") as info:
        call_with_backoff(throttled, lambda e: isinstance(e, ThrottledError), policy, "x")
    assert calls == 5 and slept == [1, 2, 4, 4]
    assert info.value.code == "Throttled"


def test_backoff_passes_other_errors_through() -> None:
    def broken() -> None:
        raise ValueError("not throttling")

    with pytest.raises(ValueError):
        call_with_backoff(broken, lambda e: isinstance(e, ThrottledError), Backoff(sleep=lambda s: None), "x")


def test_redact() -> None:
    assert redact("key AKID123 rejected", ["AKID123", "", "e"]) == "key *** rejected"
