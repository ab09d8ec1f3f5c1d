"""Training objectives (knowledge/lexicon.yaml stages) change the memory model: a preference pair runs two
sequences (activations double), DPO/KTO keep a frozen reference model (a second copy of the weights for a full
fine-tune; the base with the adapter off for LoRA), PPO also holds reward and value models."""

from __future__ import annotations

import pytest

from service.catalog.loader import Catalog
from service.planner.estimate import EstimateRequest, estimate
from service.workload import Workload


def _mem(catalog: Catalog, method: str, stage: str | None, gpus: int = 1) -> dict[str, float]:
    w = Workload(model="Qwen2.5-7B", method=method, stage=stage)
    out = estimate(EstimateRequest(w, "A100-80G-SXM", gpus), catalog)
    return out["memory"]  # type: ignore[return-value]


def test_dpo_full_holds_a_reference_copy_and_two_sequences(catalog: Catalog) -> None:
    sft, dpo = _mem(catalog, "full", None, 8), _mem(catalog, "full", "dpo", 8)
    assert dpo["weights_gib"] > sft["weights_gib"] * 1.5  # + a bf16 reference model, sharded like the policy
    assert dpo["activations_gib"] == pytest.approx(2 * sft["activations_gib"], rel=0.05)


def test_dpo_lora_uses_the_base_as_its_reference(catalog: Catalog) -> None:
    sft, dpo = _mem(catalog, "lora", None), _mem(catalog, "lora", "dpo")
    assert dpo["weights_gib"] == pytest.approx(sft["weights_gib"], rel=0.01)  # no second copy
    assert dpo["activations_gib"] > 1.8 * sft["activations_gib"]  # chosen + rejected


@pytest.mark.parametrize(("stage", "copies"), [
    ("orpo", 0),  # reference-free
    ("kto", 0),   # LoRA: the base is the reference
    ("ppo", 2),   # reward and value models beside the policy
])
def test_frozen_models_per_stage_with_lora(catalog: Catalog, stage: str, copies: int) -> None:
    sft, other = _mem(catalog, "lora", None), _mem(catalog, "lora", stage)
    extra = other["weights_gib"] - sft["weights_gib"]
    assert extra == pytest.approx(copies * sft["weights_gib"], rel=0.1, abs=0.2)


def test_a_stage_is_stated_in_the_assumptions(catalog: Catalog) -> None:
    out = estimate(EstimateRequest(Workload(model="Qwen2.5-7B", method="full", stage="dpo"), "A100-80G-SXM", 8),
                   catalog)
    assert any("DPO" in a and "frozen" in a for a in out["assumptions"])  # type: ignore[union-attr]
