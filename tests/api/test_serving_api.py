"""POST /v1/inference and POST /v1/plan/serving: the engine through the API, errors as the one JSON body."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient


def test_inference_returns_the_contract(client: TestClient) -> None:
    r = client.post("/v1/inference", json={"model": "Qwen2.5-14B", "gpu": "L20", "max_model_len": 32768,
                                           "concurrency": 40})
    assert r.status_code == 200
    body = r.json()
    for key in ("weights_gib_per_gpu", "kv_bytes_per_token", "kv_capacity_tokens", "max_concurrency", "starts",
                "starts_reason", "output_tokens_per_s", "ttft_ms", "tpot_ms"):
        assert key in body
    assert body["starts"] is True


def test_serving_plan_is_typed_and_capped(client: TestClient) -> None:
    r = client.post("/v1/plan/serving?max_candidates=1", json={
        "model": "Llama-3.1-70B", "input_tokens": 2000, "output_tokens": 400, "request_rate": 15,
        "max_model_len": 8192})
    assert r.status_code == 200
    body = r.json()
    assert body["kind"] == "serving" and body["workload"]["request_rate"] == 15
    assert len(body["candidates"]) <= 1 + len(body["picks"])  # each cloud's pick is kept
    assert set(body["picks"]) <= {"tencent", "jdcloud"}


@pytest.mark.parametrize(("route", "payload", "status", "needle"), [
    ("/v1/inference", {"model": "Qwen9-chat", "gpu": "A10"}, 400, "Did you mean"),  # unknown, no size stated
    ("/v1/inference", {"model": "Qwen2.5-7B", "gpu": "A10", "concurrency": 4, "request_rate": 2}, 422, "not both"),
    ("/v1/inference", {"model": "Qwen2.5-7B", "gpu": "A10", "concurrency": -4}, 422, "concurrency"),  # negative
    ("/v1/inference", {"model": "Qwen2.5-7B"}, 422, "gpu"),  # the GPU is required here
    ("/v1/inference", {"model": "Qwen2.5-7B", "gpu": "A10", "input_tokens": "7"}, 422, "JSON number"),
    ("/v1/plan/serving", {"model": "ResNet-50"}, 422, "not a generative LLM"),  # not an LLM
    ("/v1/plan/serving", {"model": "Qwen2.5-7B", "method": "lora"}, 422, "method"),  # a training field
])
def test_bad_serving_requests(client: TestClient, route: str, payload: dict[str, object], status: int,
                              needle: str) -> None:
    r = client.post(route, json=payload)
    assert r.status_code == status
    assert needle in r.json()["error"]["message"]


@pytest.mark.parametrize(("route", "payload"), [
    ("/v1/inference", {"model": "acme-llm-9b", "gpu": "L20"}),
    ("/v1/plan/serving", {"model": "acme-llm-9b"}),
    ("/v1/plan", {"model": "acme-llm-9b"}),
])
def test_a_name_with_a_size_is_estimated_and_labelled(client: TestClient, route: str,
                                                      payload: dict[str, object]) -> None:
    r = client.post(route, json=payload)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["model"]["estimated"] is True
    assert body["assumptions"][0].startswith("'acme-llm-9b' is not in the catalog: estimated")
