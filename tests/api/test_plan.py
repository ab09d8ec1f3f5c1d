"""POST /v1/plan and /v1/estimate: the engine through the API, and its errors as JSON."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient


def test_plan_returns_the_plan_json(client: TestClient) -> None:
    r = client.post("/v1/plan", json={"model": "Qwen2-7B", "samples": 100000, "budget_cny": 3000})
    assert r.status_code == 200
    body = r.json()
    assert set(body["picks"]) <= {"tencent", "jdcloud"} and body["picks"]
    cand = body["candidates"][0]
    assert cand["price"]["source"] and (cand["price"]["as_of"] or cand["price"]["captured"]) and cand["price"]["confidence"]  # provenance


def test_plan_max_candidates_caps_the_list(client: TestClient) -> None:
    body = client.post("/v1/plan?max_candidates=1", json={"model": "Qwen2-7B"}).json()
    picked = set(body["picks"].values()) | set(body["alternatives"].values())
    assert len(body["candidates"]) <= 1 + len(picked)  # picks and alternatives are always kept
    assert body["n_candidates"] >= len(body["candidates"])


def test_unknown_model_is_400_with_did_you_mean(client: TestClient) -> None:
    r = client.post("/v1/plan", json={"model": "Qwen9-7"})  # no size stated ('Qwen9-7B' is estimated as a 7B)
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["code"] == "unknown_name" and "Did you mean" in err["message"] and "Qwen2-7B" in err["message"]
    assert err["fix"]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"model": "Qwen2-7B", "budget_cny": -5}, "budget_cny"),  # negative budget
        ({"model": "Qwen2-7B", "method": "sft"}, "method"),  # not a method
        ({"model": "Qwen2-7B", "clouds": ["aws"]}, "clouds.0"),  # not a supported cloud
        ({"model": "Qwen2-7B", "gpus": 2}, "gpus"),  # estimate's field sent to plan: extra="forbid"
        ({"method": "lora"}, "body"),  # neither model nor params_b
    ],
)
def test_bad_workload_is_422_naming_the_field(client: TestClient, payload: dict[str, object], field: str) -> None:
    r = client.post("/v1/plan", json=payload)
    assert r.status_code == 422
    err = r.json()["error"]
    assert err["code"] == "invalid_input" and f"Invalid input: {field}:" in err["message"]


def test_estimate_sizes_one_setup(client: TestClient) -> None:
    r = client.post("/v1/estimate", json={"model": "Qwen2-7B", "method": "lora", "gpu": "A10", "gpus": 1})
    assert r.status_code == 200
    body = r.json()
    assert body["gpu"] == "A10" and body["gpus"] == 1 and isinstance(body["fits"], bool)
    assert body["memory"]["per_gpu_gib"] > 0


def test_estimate_offload_and_count(client: TestClient) -> None:
    r = client.post("/v1/estimate", json={"model": "Qwen2-7B", "method": "full", "gpu": "A100", "gpus": 4,
                                          "offload": "optimizer"})
    assert r.status_code == 200 and r.json()["strategy"]["offload"] == "optimizer"


@pytest.mark.parametrize(
    ("payload", "status", "needle"),
    [
        ({"model": "Qwen2-7B", "gpu": "A1000"}, 400, "Did you mean"),  # unknown GPU
        ({"model": "Qwen2-7B", "gpu": "A10", "gpus": 0}, 422, "gpus:"),  # zero GPUs
        ({"model": "Qwen2-7B", "gpu": "A10", "offload": "disk"}, 422, "offload:"),  # not an offload mode
        ({"model": "Qwen2-7B"}, 422, "gpu:"),  # GPU missing
    ],
)
def test_bad_estimate(client: TestClient, payload: dict[str, object], status: int, needle: str) -> None:
    r = client.post("/v1/estimate", json=payload)
    assert r.status_code == status and needle in r.json()["error"]["message"]
