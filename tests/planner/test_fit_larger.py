"""No count of the named card holds the job: the larger card that does, chosen as a renter would (planner/questions/
fit.py:_larger_cards)."""

from __future__ import annotations

from pathlib import Path

from service.catalog.loader import load_catalog
from service.planner.questions.fit import min_gpus
from service.workload import Workload

ROOT = Path(__file__).resolve().parents[2]


def test_the_larger_card_is_a_rented_reference_card_that_holds_it() -> None:
    cat = load_catalog(ROOT / "knowledge")
    w = Workload(model="Qwen2.5-32B", method="lora", seq_len=8192)
    out = min_gpus(cat, w, "RTX-4090")
    assert out["gpus_needed"] is None and len(out["options"]) == 1
    alt = out["options"][0]
    rented = {r.gpu for r in cat.instances if not r.stale}
    assert alt["gpu"] in rented and alt["gpu_memory_gib"] > 24 and alt["gpus_needed"] >= 1
    assert min_gpus(cat, w, alt["gpu"])["gpus_needed"] == alt["gpus_needed"]  # the same count asked directly
    # a job that fits the named card says no alternative
    assert min_gpus(cat, Workload(model="Qwen2.5-7B", method="lora"), "RTX-4090")["options"] == []
