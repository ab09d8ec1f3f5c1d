"""POST /v1/plan as the one plan contract: a workload of either kind in (told apart by `kind`, training when
absent), the TrainingPlan | ServingPlan union out, declared in the OpenAPI with its discriminator."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.planner.contract import parse_plan, parse_request
from service.planner.serving_types import ServingPlan
from service.planner.training_types import TrainingPlan

SERVING = {"kind": "serving", "model": "Qwen2.5-14B", "max_model_len": 8192, "input_tokens": 2000,
           "output_tokens": 300, "concurrency": 16}


@pytest.mark.parametrize(("body", "kind", "model"), [
    ({"model": "Qwen2-7B", "samples": 100_000, "budget_cny": 3000}, "training", TrainingPlan),  # no kind: training
    ({"kind": "training", "model": "Qwen2-7B", "method": "qlora"}, "training", TrainingPlan),  # kind stated
    (SERVING, "serving", ServingPlan),  # a serving workload through the same route
])
def test_each_kind_round_trips_through_the_api(client: TestClient, body: dict[str, Any], kind: str,
                                               model: type) -> None:
    r = client.post("/v1/plan?max_candidates=3", json=body)
    assert r.status_code == 200, r.text
    plan = r.json()
    typed = parse_plan(plan)  # the JSON validates against the union, and picks the right member
    assert plan["kind"] == kind and isinstance(typed, model)
    assert typed.model_dump(mode="json") == plan
    assert plan["workload"]["kind"] == kind  # the workload echo carries its kind too
    again = client.post("/v1/plan?max_candidates=3", json=plan["workload"])  # the echo is a valid request
    assert again.status_code == 200 and again.json() == plan


def test_the_serving_alias_answers_the_same_plan(client: TestClient) -> None:
    via_plan = client.post("/v1/plan", json=SERVING).json()
    via_alias = client.post("/v1/plan/serving", json={k: v for k, v in SERVING.items() if k != "kind"}).json()
    assert via_plan == via_alias and via_plan["kind"] == "serving"


def test_openapi_declares_the_union_with_its_discriminator(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    op = spec["paths"]["/v1/plan"]["post"]
    out = op["responses"]["200"]["content"]["application/json"]["schema"]
    refs = {"training": "#/components/schemas/TrainingPlan", "serving": "#/components/schemas/ServingPlan"}
    assert out["discriminator"] == {"propertyName": "kind", "mapping": refs}
    assert sorted(x["$ref"] for x in out["oneOf"]) == sorted(refs.values())
    body = op["requestBody"]["content"]["application/json"]["schema"]
    assert sorted(x["$ref"] for x in body["oneOf"]) == ["#/components/schemas/ServingKindIn",
                                                        "#/components/schemas/WorkloadIn"]
    schemas = spec["components"]["schemas"]
    # The two request members exclude each other: serving needs kind "serving", training allows only "training"
    assert "kind" in schemas["ServingKindIn"]["required"] and schemas["ServingKindIn"]["properties"]["kind"][
        "const"] == "serving"
    assert schemas["WorkloadIn"]["properties"]["kind"]["const"] == "training"
    assert "kind" not in schemas["WorkloadIn"].get("required", [])
    for name in ("TrainingPlan", "ServingPlan"):
        assert "kind" in schemas[name]["required"]  # every answer says its kind


@pytest.mark.parametrize(("body", "needle"), [
    ({"kind": "inference", "model": "Qwen2-7B"}, "kind: 'inference' is not a plan kind: send 'training'"),  # typo
    ({"kind": 1, "model": "Qwen2-7B"}, "kind: '1' is not a plan kind"),  # not a string
    ({"kind": "serving", "model": "Qwen2.5-14B", "method": "lora"}, "method: Extra inputs"),  # training field
    ({"model": "Qwen2.5-14B", "concurrency": 16}, "concurrency: Extra inputs"),  # serving field without kind
    ({"kind": "serving", "model": "Qwen2.5-14B", "concurrency": "16"}, "concurrency: send a JSON number"),
    ({"kind": "serving"}, "body: give a model name"),  # a rule between fields
    ({"model": "Qwen2-7B", "budget_cny": -5}, "budget_cny: Input should be greater than 0"),  # no union tag shown
])
def test_bad_requests_are_422_naming_the_field(client: TestClient, body: dict[str, Any], needle: str) -> None:
    r = client.post("/v1/plan", json=body)
    assert r.status_code == 422
    err = r.json()["error"]
    assert err["code"] == "invalid_input" and needle in err["message"], err["message"]
    assert not re.search(r"(input:|;) (training|serving)\b", err["message"])  # the union's member names, unsent
    if "kind:" in needle:
        assert "'serving'" in err["message"]  # the fix names the other kind


def test_parse_request_tells_the_kinds_apart() -> None:
    assert parse_request({"model": "Qwen2-7B"}).kind == "training"
    assert parse_request({"kind": "serving", "model": "Qwen2.5-14B"}).kind == "serving"


def test_contract_drift_is_a_500_not_the_clients_422(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import service.planner.report as report

    real = report.plan_to_dict
    monkeypatch.setattr(report, "plan_to_dict", lambda *a, **k: {**real(*a, **k), "gpu_hours": 1.0})
    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.post("/v1/plan", json={"model": "Qwen2-7B"})
    assert r.status_code == 500 and r.json()["error"]["code"] == "internal_error"


def test_a_serving_plan_sent_for_a_training_document_is_a_422_naming_its_kind(client: TestClient) -> None:
    plan = client.post("/v1/plan", json=SERVING).json()
    r = client.post("/v1/documents/request", json={"plan": plan})
    assert r.status_code == 422 and "plan.workload.kind: this plans training" in r.json()["error"]["message"]
