"""The engine functions of the capacity, diagnose and catalog-fact question types: every figure equals the
estimate's at the size the answer names, and the verdicts follow from it."""

from __future__ import annotations

import pytest

from service.catalog.loader import Catalog
from service.planner.estimate import EstimateRequest, estimate
from service.planner.questions.capacity import capacity
from service.planner.questions.diagnose import Observation, diagnose
from service.planner.questions.facts import catalog_fact, family
from service.workload import Workload


def _fits(catalog: Catalog, w: Workload, gpu: str, n: int) -> bool:
    if n > 1 and w.zero_stage is None:
        w = w.model_copy(update={"zero_stage": 3})
    return bool(estimate(EstimateRequest(w, gpu, n), catalog)["fits"])


# --- capacity ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("gpu", "n"), [("RTX-4090", 1), ("H800-SXM", 8), ("A100-80G-SXM", 1)])
def test_largest_model_fits_and_the_next_size_does_not(catalog: Catalog, gpu: str, n: int) -> None:
    out = capacity(catalog, Workload(params_b=1), gpu, n, "model_size", method_stated=False)
    assert [r["method"] for r in out["rows"]] == ["full", "lora", "qlora"]
    for row in out["rows"]:
        if row["largest_fitting"] is not None:
            w = Workload(model=row["largest_fitting"]["model"], method=row["method"])
            assert _fits(catalog, w, gpu, n)
        if row["smallest_not_fitting"] is not None:
            w = Workload(model=row["smallest_not_fitting"]["model"], method=row["method"])
            assert not _fits(catalog, w, gpu, n)
            assert row["largest_fitting"]["params_b"] <= row["max_params_b"] <= row["smallest_not_fitting"]["params_b"]


def test_model_size_grows_from_full_to_lora_to_qlora(catalog: Catalog) -> None:
    rows = capacity(catalog, Workload(params_b=1), "RTX-4090", 1, "model_size", method_stated=False)["rows"]
    full, lora, qlora = (r["max_params_b"] for r in rows)
    assert full < lora < qlora


def test_longest_context_is_a_limit(catalog: Catalog) -> None:
    w = Workload(model="Qwen2.5-7B", method="lora")
    out = capacity(catalog, w, "RTX-4090", 1, "context")
    top = out["max_seq_len"]
    assert top is not None and top % 512 == 0
    assert _fits(catalog, w.model_copy(update={"seq_len": top}), "RTX-4090", 1)
    assert not _fits(catalog, w.model_copy(update={"seq_len": top + 512}), "RTX-4090", 1)
    assert out["per_gpu_gib"] <= out["usable_gib"]


def test_largest_micro_batch_is_a_limit(catalog: Catalog) -> None:
    w = Workload(model="Qwen2.5-7B", method="lora", seq_len=2048)
    b = capacity(catalog, w, "A100-80G-SXM", 1, "batch")["max_micro_batch"]
    assert b is not None and b >= 1
    assert _fits(catalog, w.model_copy(update={"micro_batch": b}), "A100-80G-SXM", 1)
    assert not _fits(catalog, w.model_copy(update={"micro_batch": b + 1}), "A100-80G-SXM", 1)


# --- diagnose ------------------------------------------------------------------------------------------------

def test_an_oom_the_engine_predicts_is_expected_with_fixes_that_fit(catalog: Catalog) -> None:
    w = Workload(model="Llama-3-70B", method="full", seq_len=4096)
    out = diagnose(catalog, w, "A800", 8, Observation(kind="oom"))
    assert out["expected"] is True and out["fits"] is False
    assert out["causes"][0]["code"] == "dominant_optimizer"  # fp32 Adam states dominate a full fine-tune
    assert out["fixes"] and all(f["fits"] for f in out["fixes"])


def test_an_oom_where_the_engine_fits_is_unexpected_and_names_settings_that_would_oom(catalog: Catalog) -> None:
    w = Workload(model="Qwen2.5-7B", method="lora", seq_len=8192)
    out = diagnose(catalog, w, "A100-80G-SXM", 1, Observation(kind="oom"))
    assert out["expected"] is False and out["fits"] is True
    assert out["causes"], "a setting that would OOM (no checkpointing, larger batch, padding) is named"
    assert all(c["fits"] is False for c in out["causes"])


@pytest.mark.parametrize(("factor", "expected"), [
    (1.0, True),    # exactly the estimate
    (1.5, True),    # within the band: data loading, eval and saving add time
    (4.0, False),   # four times slower: something is off
    (0.2, False),   # much faster than the engine: the data is smaller than assumed
])
def test_hours_per_epoch_against_the_estimate(catalog: Catalog, factor: float, expected: bool) -> None:
    w = Workload(model="Qwen2.5-7B", method="lora", samples=100_000, epochs=1)
    base = estimate(EstimateRequest(w, "A10", 1), catalog)["training_hours"]
    out = diagnose(catalog, w, "A10", 1, Observation(kind="hours", hours=base * factor))
    assert out["expected"] is expected
    assert out["estimated_hours_per_epoch"] == pytest.approx(base, rel=0.01)



def test_hours_of_the_whole_run_are_compared_with_all_its_epochs(catalog: Catalog) -> None:
    # 'One RTX 3090, 88 hours, is this normal? --num_epochs=10' was compared with one epoch (59x 'too slow')
    w = Workload(model="Qwen2.5-7B", method="lora", samples=100_000, epochs=10)
    run = estimate(EstimateRequest(w, "A10", 1), catalog)["training_hours"]
    whole = diagnose(catalog, w, "A10", 1, Observation(kind="hours", hours=run * 1.2, whole_run=True))
    assert whole["expected"] is True and whole["ratio"] == pytest.approx(1.2, rel=0.01)
    assert whole["estimated_hours_run"] == pytest.approx(run, rel=0.01)
    per_epoch = diagnose(catalog, w, "A10", 1, Observation(kind="hours", hours=run * 1.2))
    assert per_epoch["expected"] is False and per_epoch["ratio"] == pytest.approx(12, rel=0.01)


def test_more_cards_slower_than_fewer_is_not_expected_where_the_engine_scales(catalog: Catalog) -> None:
    # '3090双卡训练比单卡慢出一倍以上' was 'expected: communication' for any run on more than one card
    w = Workload(model="Qwen2.5-7B", method="lora")
    two = diagnose(catalog, w, "RTX-3090", 2, Observation(kind="slow"))
    assert two["expected"] is False and two["speedup_vs_reference"] >= 1.3 and two["reference_gpus"] == 1
    assert [c["code"] for c in two["causes"]][:2] == ["should_scale", "no_p2p"]
    nodes = diagnose(catalog, Workload(model="Qwen2.5-7B", method="full"), "A100-40G-SXM", 16, Observation(kind="slow"))
    assert nodes["reference_gpus"] == 8 and "no_rdma" in [c["code"] for c in nodes["causes"]]
    one = diagnose(catalog, w, "RTX-3090", 1, Observation(kind="slow"))
    assert "speedup_vs_reference" not in one


def test_hours_without_a_data_size_are_not_judged_on_a_default_dataset(catalog: Catalog) -> None:
    # '训一个epoch要20小时正常吗' with no sample count: the verdict rested on a 10k-sample default; now the answer says how
    # many tokens the time buys at the estimated rate and asks for the data
    out = diagnose(catalog, Workload(model="Qwen2.5-7B", method="lora"), "A10", 1, Observation(kind="hours", hours=20))
    assert out["expected"] is None and out["data_unknown"] is True
    assert out["tokens_in_observed_time"] == pytest.approx(out["tokens_per_s"] * 20 * 3600, rel=0.01)

def test_observed_training_rate_is_judged_against_the_estimate(catalog: Catalog) -> None:
    # '4090 上 LoRA 7B 只有 900 tokens/s 正常吗': the rate seen against the engine's rate for the same setup
    w = Workload(model="Qwen2.5-7B", method="lora")
    est = diagnose(catalog, w, "RTX-4090", 1, Observation(kind="slow"))["throughput_tokens_per_s"]
    near = diagnose(catalog, w, "RTX-4090", 1, Observation(kind="slow", tokens_per_s=est * 1.1))
    assert near["expected"] is True and near["ratio"] == pytest.approx(1 / 1.1, rel=0.02)
    slow = diagnose(catalog, w, "RTX-4090", 1, Observation(kind="slow", tokens_per_s=est / 10))
    assert slow["expected"] is False and slow["ratio"] == pytest.approx(10, rel=0.02) and slow["causes"]
    fast = diagnose(catalog, w, "RTX-4090", 1, Observation(kind="slow", tokens_per_s=est * 10))
    assert fast["expected"] is False and fast["causes"][0]["code"] == "faster_than_estimate"


def test_host_ram_overflow_names_the_offload_need(catalog: Catalog) -> None:
    out = diagnose(catalog, Workload(model="Qwen2.5-32B", method="full"), "A100-80G-SXM", 8,
                   Observation(kind="host_oom"))
    assert out["host_ram_needed_gib"] > 100 and out["causes"][0]["code"] == "offload_host_ram"


# --- catalog facts -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("gpu_id", "fam"), [("A100-80G-SXM", "A100"), ("V100-32G-SXM2", "V100"),
                                            ("RTX-4090", "RTX-4090"), ("H800-PCIE", "H800")])
def test_gpu_family(gpu_id: str, fam: str) -> None:
    assert family(gpu_id) == fam


def test_who_sells_a_gpu_comes_from_the_instances(catalog: Catalog) -> None:
    jd = catalog_fact(catalog, "sells", "A100", ["jdcloud"])
    assert jd is not None
    sold_on_jd = {family(r.gpu) for r in catalog.instances if r.cloud == "jdcloud"}
    assert (jd["answer"] == "yes") == ("A100" in sold_on_jd)
    assert set(jd["cloud_gpus"]["jdcloud"]) <= sold_on_jd
    tc = catalog_fact(catalog, "sells", "L20", ["tencent"])
    assert tc is not None and tc["answer"] == "yes" and all(r["cloud"] == "tencent" for r in tc["rows"])


@pytest.mark.parametrize(("gpu", "fact", "answer"), [
    ("A10", "supports_fp8", "no"),     # Ampere: no FP8 tensor cores
    ("H800", "supports_fp8", "yes"),   # Hopper
    ("V100", "supports_bf16", "no"),   # Volta has no BF16
    ("L20", "nvlink", "no"),           # PCIe card without NVLink
])
def test_gpu_support_facts(catalog: Catalog, gpu: str, fact: str, answer: str) -> None:
    out = catalog_fact(catalog, fact, gpu)  # type: ignore[arg-type]
    assert out is not None and out["answer"] == answer


def test_an_unknown_gpu_is_not_a_catalog_fact(catalog: Catalog) -> None:
    assert catalog_fact(catalog, "supports_fp8", "Gaudi2") is None  # MI300X is catalogued since December 2026


def test_price_of_a_price_on_request_gpu_says_so(catalog: Catalog) -> None:
    out = catalog_fact(catalog, "price", "H800")
    assert out is not None and out["answer"] in ("on_request", "yes")
    if out["answer"] == "on_request":
        assert out["on_request"]


def test_regions_of_a_named_family_and_a_city(catalog: Catalog) -> None:
    # '腾讯云哪些区能买到GT4 广州有吗': GT4's own regions, and yes with the Guangzhou zones
    out = catalog_fact(catalog, "regions", clouds=["tencent"], family_name="gt4", place="guangzhou")
    assert out is not None and out["instance_family"] == "GT4" and [r["family"] for r in out["rows"]] == ["GT4"]
    gt4 = next(r for r in catalog.instances if r.family == "GT4")
    assert out["answer"] == "yes" and out["place_regions"] == sorted(
        z for z in (gt4.regions or "").split(";") if z.startswith("Guangzhou"))
    far = catalog_fact(catalog, "regions", clouds=["tencent"], family_name="GT4", place="mumbai")
    assert far is not None and far["answer"] == "no"


def test_regions_the_catalog_does_not_list_are_said_unlisted(catalog: Catalog) -> None:
    out = catalog_fact(catalog, "regions", "H800", ["tencent"])
    assert out is not None and out["rows"] == [] and "HCCPNV5" in out["unlisted"] and out["answer"] is None
