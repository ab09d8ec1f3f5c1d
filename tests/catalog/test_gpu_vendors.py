"""GPUs no cloud here sells: consumer cards, the 48 GB 4090 mod, Huawei Ascend, AMD Instinct. They resolve by the
names people type, are sized like any GPU, carry no instance rows, and non-NVIDIA rows have no CUDA fields."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from service.assistant.prompts import phrases
from service.catalog.queries import normalize, resolve_gpu
from service.catalog.schema import GpuSpec
from service.planner.estimate import EstimateRequest, estimate
from service.planner.plan import plan
from service.planner.questions.facts import catalog_fact
from service.questions.knowledge import GpuFact, gpu_fact
from service.retrieval.catalog_render import _gpu_section
from service.sizing.host import gpu_notes
from service.workload import Workload

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"

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


# --------------------------------------------------------------------------- the shipped rows

NEW_ROWS = {
    # name as people type it -> row id
    "5090": "RTX-5090", "rtx5090": "RTX-5090", "RTX 5090": "RTX-5090", "5090D": "RTX-5090D",
    "5090D V2": "RTX-5090D-V2",
    "4090 48g": "RTX-4090-48G", "4090 48GB": "RTX-4090-48G", "魔改4090": "RTX-4090-48G", "RTX 4090 48G": "RTX-4090-48G",
    "4090D 48G": "RTX-4090D-48G", "魔改4090D": "RTX-4090D-48G",
    "3060": "RTX-3060-12G", "3080": "RTX-3080-10G", "3080 12G": "RTX-3080-12G", "4080": "RTX-4080",
    "4080 SUPER": "RTX-4080-SUPER", "4080s": "RTX-4080-SUPER", "4060 Ti 16G": "RTX-4060TI-16G",
    "2080Ti": "RTX-2080TI", "2080 Ti": "RTX-2080TI", "Titan V": "TITAN-V",
    "a6000": "RTX-A6000", "RTX A6000": "RTX-A6000", "RTX 6000 Ada": "RTX-6000-ADA",
    "A800 40G SXM": "A800-40G-SXM", "H20 141G": "H20-141G", "P100": "P100-16G-PCIE", "K80": "K80",
    "910B": "ASCEND-910B2", "昇腾910B": "ASCEND-910B2", "Ascend 910B": "ASCEND-910B2", "910B2": "ASCEND-910B2",
    "910C": "ASCEND-910C", "昇腾910C": "ASCEND-910C", "MI300X": "MI300X", "AMD MI300X": "MI300X",
}


@pytest.mark.parametrize(("name", "gpu_id"), sorted(NEW_ROWS.items()))
def test_new_rows_resolve_by_the_names_people_type(gpu, name: str, gpu_id: str) -> None:  # type: ignore[no-untyped-def]
    assert gpu(name).id == gpu_id


def test_the_names_that_already_meant_something_still_do(gpu) -> None:  # type: ignore[no-untyped-def]
    assert gpu("4090").id == "RTX-4090" and gpu("4090D").id == "RTX-4090D"  # 24 GB cards stay the default
    assert gpu("H20").id == "H20" and gpu("A800 40G").id == "A800-40G-PCIE" and gpu("A800").id == "A800-80G-SXM"


def test_no_name_points_at_two_rows(catalog) -> None:  # type: ignore[no-untyped-def]
    owner: dict[str, str] = {}
    for g in catalog.gpus:
        for name in (g.id, g.name, *g.aliases, *g.default_for):
            key = normalize(name)
            assert owner.setdefault(key, g.id) == g.id, (name, owner[key], g.id)


def test_new_rows_have_no_instance_rows(catalog) -> None:  # type: ignore[no-untyped-def]
    rented = {r.gpu for r in catalog.instances}
    assert not set(NEW_ROWS.values()) & rented


def test_the_planner_only_picks_rented_gpus(catalog) -> None:  # type: ignore[no-untyped-def]
    result = plan(Workload(model="Qwen2-7B", method="lora"), catalog,
                  today=date(2026, 11, 30), frontier=False)
    rented = {r.gpu for r in catalog.instances}
    assert result.candidates and {c.gpu.id for c in result.candidates} <= rented


def test_non_nvidia_rows_carry_no_cuda_and_name_their_stack(catalog) -> None:  # type: ignore[no-untyped-def]
    others = {g.id: g for g in catalog.gpus if g.vendor != "nvidia"}
    assert set(others) == {"ASCEND-910B2", "ASCEND-910C", "MI300X"}
    for g in others.values():
        assert g.compute_capability is None and g.min_cuda is None and g.max_cuda is None
        assert g.form_factor == "oam" and g.as_of == date(2026, 12, 1)
    assert others["ASCEND-910B2"].memory_gib == 64 and others["ASCEND-910B2"].link_name == "HCCS"
    assert not others["ASCEND-910B2"].supports_fp8  # FP8 first on the Ascend 950
    assert others["MI300X"].memory_gib == 192 and others["MI300X"].software_stack == "ROCm"


def test_the_48g_4090s_say_they_are_unofficial(gpu) -> None:  # type: ignore[no-untyped-def]
    for name in ("4090 48G", "4090D 48G"):
        g = gpu(name)
        assert "unofficial" in g.name and g.notes.startswith("UNOFFICIAL") and g.confidence != "official"
        assert g.memory_gib == 48
    assert gpu("4090 48G").dense_16bit_tflops == gpu("4090").dense_16bit_tflops
    assert gpu("4090D 48G").dense_16bit_tflops == gpu("4090D").dense_16bit_tflops


def test_geforce_tensor_rates_follow_the_fp32_accumulate_rule(gpu) -> None:  # type: ignore[no-untyped-def]
    # SMs x boost GHz x 512 (GeForce halves FP32-accumulate tensor math): the derived rows match the rule.
    for name, sms, ghz in (("3060", 28, 1.777), ("3080", 68, 1.71), ("3080 12G", 70, 1.71), ("4080", 76, 2.505),
                           ("4080 SUPER", 80, 2.55), ("4060 Ti 16G", 34, 2.535), ("2080 Ti", 68, 1.545)):
        assert gpu(name).dense_16bit_tflops == pytest.approx(sms * ghz * 512 / 1000, abs=0.1), name


def test_every_new_row_explains_itself(catalog) -> None:  # type: ignore[no-untyped-def]
    for g in catalog.gpus:
        if g.id in NEW_ROWS.values():
            assert g.notes and "https://" in g.source and g.as_of == date(2026, 12, 1), g.id
            if g.confidence in ("inferred", "unverified"):
                assert "(i)" in g.notes or "unverified" in g.notes, g.id


# --------------------------------------------------------------------------- answers about them


def test_an_ascend_estimate_sizes_it_and_says_it_is_not_rented_and_not_cuda(catalog) -> None:  # type: ignore[no-untyped-def]
    out = estimate(EstimateRequest(Workload(model="Qwen2-7B", method="lora"), "昇腾910B"),
                   catalog)
    assert out["gpu"] == "ASCEND-910B2" and out["fits"] is True and out["training_hours"] > 0  # type: ignore[operator]
    codes = {w["code"] for w in out["warnings"]}  # type: ignore[attr-defined]
    assert {"not_cuda", "not_rented"} <= codes and "nvlink_400" not in codes


def test_a_rented_gpu_estimate_does_not_say_not_rented(catalog) -> None:  # type: ignore[no-untyped-def]
    out = estimate(EstimateRequest(Workload(model="Qwen2-7B", method="lora"), "A10"),
                   catalog)
    assert "not_rented" not in {w["code"] for w in out["warnings"]}  # type: ignore[attr-defined]


def test_kepler_and_pascal_train_in_fp32_and_say_so(gpu) -> None:  # type: ignore[no-untyped-def]
    k80 = {n.code: n for n in gpu_notes(gpu("K80"), 2, 1, rdma=False)}
    assert "FP32" in k80["no_bf16"].en and "CUDA 12.0" in k80["cuda_max"].en and "cu126" not in k80["cuda_max"].en
    assert "CUDA 13.0" in {n.code: n for n in gpu_notes(gpu("P100"), 1, 1, rdma=False)}["cuda_max"].en
    assert {n.code for n in gpu_notes(gpu("910B"), 8, 1, rdma=False)}.isdisjoint({"nvlink_400", "no_nvlink"})


def test_gpu_facts_read_sensibly_for_a_non_nvidia_card(catalog) -> None:  # type: ignore[no-untyped-def]
    g = resolve_gpu("910B", catalog.gpus)[0]
    zh = gpu_fact(GpuFact.model_validate({**g.model_dump(), "sold_as": []}), phrases(PROMPTS, "zh"))
    assert "HCCS 392 GB/s" in zh and "CANN" in zh and "CUDA None" not in zh and "最低 CUDA" not in zh
    en = gpu_fact(GpuFact.model_validate({**resolve_gpu("A10", catalog.gpus)[0].model_dump(), "sold_as": []}),
                  phrases(PROMPTS, "en"))
    assert "NVLink 0 GB/s" in en and "minimum CUDA 11.1" in en
    cuda = catalog_fact(catalog, "cuda", "910B")
    assert cuda is not None and cuda["answer"] == "n/a" and cuda["gpu_vendor"] == "huawei"
    nvlink = catalog_fact(catalog, "nvlink", "910B")
    assert nvlink is not None and nvlink["answer"] == "no" and nvlink["link"] == "HCCS"
    sells = catalog_fact(catalog, "sells", "5090")
    assert sells is not None and sells["answer"] == "no"


def test_the_catalog_document_section_of_a_non_nvidia_card(gpu) -> None:  # type: ignore[no-untyped-def]
    zh = _gpu_section(gpu("910C"), "zh")
    assert "HCCS 多卡互联" in zh and "不使用 CUDA" in zh and "最低 CUDA" not in zh and "None" not in zh
    assert "minimum CUDA 11.1" in _gpu_section(gpu("A10"), "en")


def test_a_feasibility_answer_says_why_no_cloud_here_rents_it(catalog) -> None:  # type: ignore[no-untyped-def]
    from service.planner.questions.fit import feasibility
    from service.questions.feasibility import FeasibilityAnswer, render_feasibility

    def rent_line(gpu_name: str, lang: str) -> str:
        art = feasibility(catalog, Workload(model="Qwen2.5-7B", method="lora"), gpu_name, 1)
        text = render_feasibility(FeasibilityAnswer.model_validate(art), phrases(PROMPTS, lang))
        return next(line for line in text.splitlines() if "Tencent" in line or "腾讯云" in line)

    assert "CANN" in rent_line("昇腾910B", "zh") and "ROCm" in rent_line("MI300X", "en")
    assert "消费级显卡" in rent_line("4090 48G", "zh")
