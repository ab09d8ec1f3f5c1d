"""GPUs no cloud here sells: consumer cards, the 48 GB 4090 mod, Huawei Ascend, AMD Instinct. They resolve by the
names people type, are sized like any GPU, carry no instance rows, and non-NVIDIA rows have no CUDA fields."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from pydantic import ValidationError

from service.catalog.schema import GpuSpec

_ROW: dict[str, Any] = {
    "id": "X", "name": "X", "arch": "ascend", "vendor": "huawei", "form_factor": "oam", "memory_gib": 64,
    "memory_type": "HBM2e", "mem_bw_gb_s": 1600, "dense_16bit_tflops": 353.9, "supports_bf16": True,
    "supports_fp8": False, "supports_flash_attn2": False, "nvlink_gb_s": 392, "pcie_gen": 4, "tdp_w": 350,
    "confidence": "inferred", "source": "https://example.org", "as_of": date(2026, 12, 1),
}


def test_a_non_nvidia_row_needs_no_cuda_fields() -> None:
    g = GpuSpec(**_ROW)
    assert g.min_cuda is None and g.compute_capability is None
    assert (g.link_name, g.software_stack) == ("HCCS", "CANN (torch_npu)")


def test_a_non_nvidia_row_may_not_claim_a_cuda_version() -> None:
    with pytest.raises(ValidationError, match="no CUDA"):
        GpuSpec(**{**_ROW, "min_cuda": "12.0", "compute_capability": "9.0"})


def test_an_nvidia_row_still_needs_its_cuda_fields() -> None:
    with pytest.raises(ValidationError, match="needs compute_capability"):
        GpuSpec(**{**_ROW, "vendor": "nvidia", "arch": "ampere"})
    assert GpuSpec(**{**_ROW, "vendor": "nvidia", "arch": "ampere", "compute_capability": "8.0",
                      "min_cuda": "11.0"}).link_name == "NVLink"


def test_vendor_defaults_to_nvidia() -> None:
    row = {k: v for k, v in _ROW.items() if k != "vendor"}
    assert GpuSpec(**{**row, "arch": "ampere", "compute_capability": "8.0", "min_cuda": "11.0"}).vendor == "nvidia"
