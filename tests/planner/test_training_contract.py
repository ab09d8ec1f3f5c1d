"""The training plan contract (service/planner/training_types.py) against what plan_to_dict builds: every workload
shape validates, and the validated model serialises back to the same JSON, byte for byte. A key added to, renamed
in or dropped from plan_to_dict fails here until TrainingPlan declares it (and docs/plan-json.md says it)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from service.catalog.loader import Catalog, load_catalog
from service.planner.plan import plan
from service.planner.report import plan_to_dict, training_plan
from service.planner.training_types import TrainingPlan
from service.workload import Workload

TODAY = date(2026, 10, 1)
KNOWLEDGE = Path(__file__).resolve().parents[2] / "knowledge"

WORKLOADS: dict[str, dict[str, Any]] = {
    # LoRA with a monthly budget: verdicts both ways, cheaper and faster alternatives
    "lora_budget": {"model": "qwen2-7b", "samples": 100_000, "budget_cny": 3000},
    # QLoRA with the same budget: the cheapest option tight on memory, a pick reason
    "qlora_budget": {"model": "qwen2-7b", "method": "qlora", "samples": 100_000, "budget_cny": 3000},
    # QLoRA on T4 only (FP16, no FlashAttention-2)
    "qlora_t4": {"model": "qwen2-7b", "method": "qlora", "gpu_include": ["T4"]},
    # 70B full fine-tune on 16 GPUs: ZeRO-3 over RDMA nodes, multi-node frontier
    "full_70b_16": {"model": "llama3-70b", "method": "full", "gpu_count": 16},
    # full fine-tune against a deadline, fastest first: meets_deadline both ways, frontier up to 64 GPUs
    "full_deadline": {"model": "qwen2-7b", "method": "full", "tokens": 2e10, "epochs": 3, "deadline_hours": 24,
                      "objective": "fastest"},
    # pretraining from a parameter count with a total budget and a deadline
    "pretrain_total": {"params_b": 7, "method": "pretrain", "tokens": 1e11, "deadline_hours": 48,
                       "budget_cny": 200_000, "budget_period": "total"},
    # nothing fits: no candidate, infeasible says what would, no cluster references
    "infeasible": {"model": "qwen2-7b", "method": "full", "gpu_include": ["T4"], "gpu_count": 1},
    # balanced objective, monthly billing asked
    "balanced_monthly": {"model": "qwen2-7b", "objective": "balanced", "billing": "monthly"},
    # freeze-tuning with a 2 TB dataset (storage note)
    "freeze_big_data": {"model": "qwen2-7b", "method": "freeze", "dataset_gb": 2000},
    # MoE: active parameters set
    "moe_qlora": {"model": "mixtral-8x7b", "method": "qlora", "samples": 5000},
    # a CNN: no layer dimensions in the transformer sense, samples as work units
    "cnn": {"model": "resnet50", "method": "full", "samples": 1_000_000},
    # an encoder, full fine-tune
    "encoder": {"model": "bert-base", "method": "full", "samples": 100_000},
    # spot billing asked, a longer context
    "spot": {"model": "qwen2-7b", "billing": "spot", "samples": 100_000, "seq_len": 4096},
    # H800 only: every candidate price on request, the pick unpriced
    "price_on_request": {"model": "qwen2-7b", "method": "lora", "gpu_include": ["H800"]},
    # A800 only: price on request with a dated market reference and an estimate range
    "quote_estimate": {"model": "qwen2-7b", "method": "lora", "gpu_include": ["A800"]},
}


@pytest.fixture(scope="module")
def plans(catalog: Catalog) -> dict[str, dict[str, Any]]:
    return {name: plan_to_dict(plan(Workload(**w), catalog, today=TODAY)) for name, w in WORKLOADS.items()}


def _json(d: Any) -> str:
    return json.dumps(d, ensure_ascii=False)


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_plan_to_dict_validates_and_round_trips_byte_for_byte(plans: dict[str, dict[str, Any]], name: str) -> None:
    d = plans[name]
    as_sent = _json(d)
    from_python = TrainingPlan.model_validate(d)
    from_json = TrainingPlan.model_validate_json(as_sent)  # what a client that reads the JSON checks
    assert _json(from_python.model_dump(mode="json")) == as_sent
    assert from_json == from_python and from_json.kind == "training"


def test_the_rows_cover_every_optional_shape(plans: dict[str, dict[str, Any]]) -> None:
    """The table above exercises each branch of the contract (else a drift there would go unseen)."""
    cands = [c for d in plans.values() for c in d["candidates"]]
    quotes = [c["quote"] for c in cands if c["quote"] is not None]
    points = [p for d in plans.values() for pts in d["frontier"].values() for p in pts]
    assert any(c["price_on_request"] for c in cands) and any(not c["price_on_request"] for c in cands)
    assert any(q["estimate_total_cny"] and q["reference"] for q in quotes) and any(not q["reference"] for q in quotes)
    assert {c["within_budget"] for c in cands} == {True, False, None}
    assert {c["meets_deadline"] for c in cands} == {True, False, None}
    assert {c["billing"] for c in cands} >= {"on_request", "on_demand", "monthly", "spot"}
    assert any(p["nodes"] > 1 for p in points) and any(p["slower_than_fewer_gpus"] for p in points)
    assert any(d["pick_reasons"] for d in plans.values())
    assert any(d["fastest_within_budget"] is None for d in plans.values())
    assert any(d["cheapest_within_deadline"] is None and d["candidates"] for d in plans.values())
    assert any(d["infeasible"] for d in plans.values()) and any(d["alternatives"] for d in plans.values())
    assert {d["model"]["kind"] for d in plans.values()} >= {"decoder", "encoder", "cnn"}
    assert any(d["model"]["active_params_b"] for d in plans.values())


def test_a_user_price_sheet_plan_validates(tmp_path: Path) -> None:
    sheet = tmp_path / "quote.csv"
    sheet.write_text("instance_type,billing,price_cny,unit,source,as_of,confidence\n"
                     "HCCPNV5,on_demand,300,hour,sales quote,2026-11-30,official\n", encoding="utf-8")
    cat = load_catalog(KNOWLEDGE, prices_file=sheet)
    p = training_plan(plan(Workload(model="qwen2-7b", gpu_include=["H800"]), cat, today=TODAY))
    assert p.candidates[0].price is not None and p.candidates[0].price.price_cny == 300


@pytest.mark.parametrize(("change", "where"), [
    (lambda d: d.update(new_key=1), "new_key"),  # a key plan_to_dict gained without the contract
    (lambda d: d["candidates"][0].pop("training_hours"), "candidates.0.training_hours"),  # a key dropped
    (lambda d: d["candidates"][0]["strategy"].update(label_en="x"), "candidates.0.strategy.label_en"),  # renamed
    (lambda d: d["job"].update(seq_len="2048"), "job.seq_len"),  # a type changed
    (lambda d: d.update(kind="serving"), "kind"),  # not a training plan
])
def test_drift_fails_naming_the_key(plans: dict[str, dict[str, Any]], change: Any, where: str) -> None:
    d = json.loads(_json(plans["lora_budget"]))
    change(d)
    with pytest.raises(ValidationError) as err:
        TrainingPlan.model_validate_json(_json(d))
    assert where in {".".join(str(x) for x in e["loc"]) for e in err.value.errors()}


def test_serialized_schema_requires_every_field() -> None:
    """Serialized, every field is present (null where not applicable): the schema says so, at every level."""
    schema = TrainingPlan.model_json_schema(mode="serialization")
    for s in [schema, *schema["$defs"].values()]:
        if "properties" in s and s.get("title") != "Workload":
            assert set(s["required"]) == set(s["properties"]), s["title"]
    assert schema["properties"]["kind"]["const"] == "training"
