"""Facts the shipped catalog must keep: the popular guide's errors stay corrected, every row is sourced."""

from __future__ import annotations

import re

import pytest

from service.catalog.schema import STAND_IN_DATES

# Instance names the selection guide invented (shared/reference/clouds.md §6): none may appear in the catalog.
INVENTED_EXACT = {"GN10X.2XLARGE4", "GN10X.4XLARGE8"}  # the real types are GN10X.2XLARGE40 / GN10X.4XLARGE80
INVENTED_PATTERNS = [
    re.compile(r"^GH100(\.|$)", re.IGNORECASE),  # "GH100 (H100)": no Tencent H100 family exists
    re.compile(r"^GI3(\.|$)", re.IGNORECASE),  # "GI3 (L4)": the real family is GI3X, with T4
    re.compile(r"^G[3-6](\.|$)", re.IGNORECASE),  # JD "G3=T4 ... G6=H100": JD's g.* prefix is general-purpose CPU
]


def test_no_invented_instance_names(catalog) -> None:
    names = {r.instance_type for r in catalog.instances} | {r.family for r in catalog.instances}
    assert not {n.upper() for n in names} & INVENTED_EXACT
    for pattern in INVENTED_PATTERNS:
        assert not [n for n in names if pattern.match(n)], pattern.pattern
    prices = {p.instance_type for p in catalog.prices}
    assert not {n.upper() for n in prices} & INVENTED_EXACT


def test_the_real_types_the_guide_garbled_are_there(catalog) -> None:
    by_name = {r.instance_type: r for r in catalog.instances}
    assert by_name["GN10X.2XLARGE40"].gpu.startswith("V100")  # the guide called it "1x A10"
    assert {r.gpu for r in catalog.instances if r.family == "GI3X"} == {"T4"}  # not L4 / L40S
    assert {r.gpu for r in catalog.instances if r.family == "GN10Xp"} == {"V100-32G-SXM2"}  # not A100


def test_jd_gpu_types_are_p_series(catalog) -> None:
    jd = [r.instance_type for r in catalog.instances if r.cloud == "jdcloud"]
    # p.* virtual machines and the cps.gpu.* physical servers: no invented G3-G6 families
    assert jd and all(name.startswith(("p.", "cps.gpu.")) for name in jd)


def test_every_instance_and_price_is_sourced_and_dated(catalog) -> None:
    for r in catalog.instances:
        assert r.source.strip() and r.as_of, r.instance_type
    for p in catalog.prices:  # the source's own date, or (an undated page) when it was captured; never a stand-in
        assert p.source.strip() and (p.as_of or p.captured), (p.instance_type, p.billing)
        assert p.as_of not in STAND_IN_DATES, (p.instance_type, p.billing)
    for g in catalog.gpus:
        assert g.source.strip() and g.as_of, g.id
    for m in catalog.models:
        assert m.source.strip() and m.as_of, m.id


def test_every_instance_has_a_price_or_is_on_request(catalog) -> None:
    # A row with no price row at all is "price on request" (the H800 HCC family): the planner still sizes it.
    priced = {p.instance_type for p in catalog.prices if not p.on_request}
    unpriced = {r.instance_type for r in catalog.instances} - priced
    assert unpriced == {"HCCPNV5", "HCCPNV4sn", "HCCPNV4h", "HCCG5v.24XLARGE384", "HCCG5vm", "BMGNV4", "BMG5v",
                        "BMG5t", "GN7vw.LARGE16", "GN7vw.2XLARGE32", "GN7vw.4XLARGE64", "cps.gpu.1", "cps.gpu.2"}


def test_a10_has_no_fp8(catalog) -> None:
    # The guide's "A10 supports FP8" is wrong: Ampere CC 8.6; FP8 needs CC >= 8.9 (Transformer Engine matrix).
    a10 = catalog.gpu("A10")
    assert a10.supports_fp8 is False and a10.fp8_tflops is None


@pytest.mark.parametrize("arch", ["kepler", "pascal", "volta", "turing", "ampere"])
def test_no_fp8_before_ada(catalog, arch: str) -> None:
    assert not [g.id for g in catalog.gpus if g.arch == arch and g.supports_fp8]


def test_hopper_needs_cuda_11_8(catalog) -> None:
    # CUDA 11.8 is the first toolkit with sm_90 (the guide said 12.0).
    hopper = [g for g in catalog.gpus if g.arch == "hopper"]
    assert hopper and {g.min_cuda for g in hopper} == {"11.8"}


def test_bf16_only_from_ampere(catalog) -> None:
    for g in catalog.gpus:
        assert g.supports_bf16 is (g.arch not in ("kepler", "pascal", "volta", "turing")), g.id


def test_calculated_parameter_counts_are_what_the_dimensions_count(catalog) -> None:
    # A row whose source says "params calc" carries the count of its own dimensions (scripts/add_model.py): a
    # dimension edited later without the count (or a count typed by hand) shows up here.
    import re

    from service.sizing.params import count_params

    for m in catalog.models:
        if m.kind == "decoder" and re.search(r"params calc \d", m.source):
            counted = count_params(m).total / 1e9 + (m.vision_params_b or 0.0)
            assert abs(counted - m.params_published_b) <= max(0.002 * counted, 1e-3), m.id


def test_every_new_architecture_family_is_represented(catalog) -> None:
    # The layouts the schema learned for issue "Every model people ask about" are in the shipped data
    by_id = {m.id: m for m in catalog.models}
    assert by_id["Qwen3-Next-80B-A3B"].linear_attn is not None  # gated DeltaNet, full attention every 4th layer
    assert by_id["MiniMax-M1"].linear_attn is not None and by_id["MiniMax-M1"].linear_attn.kind == "lightning"
    maverick = by_id["Llama-4-Maverick-17B-128E"].moe
    assert maverick is not None and maverick.layer_step == 2  # MoE on every other layer
    assert by_id["DeepSeek-V3.2"].mla is not None and by_id["DeepSeek-V3.2"].mla.index_head_dim  # DSA indexer
    assert len(catalog.models) >= 250
