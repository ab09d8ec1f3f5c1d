"""Regression (issue 23, part 4): `POST /v1/documents/request` with deadline_hours = 5e-324 (the smallest positive
float) overflowed the deadline note's GPU count (math.ceil of infinity) in planner/advice.py: a 500. Every float the
workload takes is sent at the edge of the range here, through every route that plans: never a server error."""

from __future__ import annotations

import sys

import pytest
from fastapi.testclient import TestClient

pytestmark = [pytest.mark.slow]

TINY = (sys.float_info.min * sys.float_info.epsilon, sys.float_info.min, 1e-30)  # 5e-324, 2.2e-308, 1e-30
FLOATS = ("params_b", "tokens", "dataset_gb", "epochs", "budget_cny", "deadline_hours")
ROUTES = ("/v1/plan", "/v1/estimate", "/v1/documents/request", "/v1/documents/launch")


def body(route: str, workload: dict[str, object]) -> dict[str, object]:
    if route == "/v1/estimate":
        return {**workload, "gpu": "A100"}
    return {"workload": workload} if route.startswith("/v1/documents/") else workload


def test_the_smallest_deadline_is_422_naming_the_field(client: TestClient) -> None:
    r = client.post("/v1/documents/request", json={"workload": {"model": "Qwen2-7B", "deadline_hours": 5e-324}})
    assert r.status_code == 422
    error = r.json()["error"]
    assert "deadline_hours" in error["message"] and "0.01" in error["message"] and error["fix"]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("field", FLOATS)
@pytest.mark.parametrize("value", TINY)
def test_tiny_floats_never_make_a_server_error(client: TestClient, route: str, field: str, value: float) -> None:
    workload: dict[str, object] = {"model": "Qwen2-7B", "samples": 10_000, "budget_cny": 3000, field: value}
    if field == "params_b":
        del workload["model"]
    r = client.post(route, json=body(route, workload))
    assert r.status_code < 500, r.text[:300]


def test_the_shortest_allowed_deadline_plans(client: TestClient) -> None:
    r = client.post("/v1/plan", json={"model": "Qwen2-7B", "samples": 100_000, "deadline_hours": 0.01})
    assert r.status_code == 200
    [note] = [n for n in r.json()["notes"] if n["code"] == "misses_deadline"]
    assert "0.01 h" in note["message"]


# Serving (issue "The edges users hit", item 4): POST /v1/inference with mem_fraction 5e-324 was a 500
# (OverflowError: math.ceil of infinity in min_gpus_for_weights). Every float of the serving workload, at the edge.
SERVING_FLOATS = ("params_b", "mem_fraction", "concurrency", "request_rate", "ttft_ms", "tpot_ms", "budget_cny")
SERVING_ROUTES = ("/v1/inference", "/v1/plan/serving", "/v1/plan")


def test_the_smallest_mem_fraction_is_422_naming_the_field(client: TestClient) -> None:
    r = client.post("/v1/inference", json={"model": "Qwen2.5-7B", "gpu": "L20", "mem_fraction": 5e-324})
    assert r.status_code == 422, r.text[:300]
    error = r.json()["error"]
    assert "mem_fraction" in error["message"] and "0.01" in error["message"] and error["fix"]


@pytest.mark.parametrize("route", SERVING_ROUTES)
@pytest.mark.parametrize("field", SERVING_FLOATS)
@pytest.mark.parametrize("value", TINY)
def test_tiny_serving_floats_never_make_a_server_error(client: TestClient, route: str, field: str,
                                                       value: float) -> None:
    workload: dict[str, object] = {"kind": "serving", "model": "Qwen2.5-7B", field: value}
    if route == "/v1/inference":
        workload["gpu"] = "L20"
    if field == "params_b":
        del workload["model"]
    r = client.post(route, json=workload)
    assert r.status_code < 500, r.text[:300]


@pytest.mark.parametrize("gpus", [None, 1, 8])
def test_the_smallest_allowed_mem_fraction_sizes_without_error(client: TestClient, gpus: int | None) -> None:
    body: dict[str, object] = {"model": "Qwen2.5-72B", "gpu": "L20", "mem_fraction": 0.01}
    if gpus:
        body["gpus"] = gpus
    r = client.post("/v1/inference", json=body)
    assert r.status_code == 200 and r.json()["starts"] is False, r.text[:300]


# Issue 31, item 2: tokens or epochs of 1e-300 planned as nothing (¥0.00 in 0 h, a 200). Below the least that
# makes a plan, the workload is refused: 422 naming the field, its least value and the fix.
@pytest.mark.parametrize(("field", "value", "least"), [
    ("tokens", 1e-300, "1"),
    ("epochs", 1e-300, "0.01"),
    ("dataset_gb", 1e-300, "0.000001"),
    ("params_b", 1e-300, "0.007"),  # the catalog's smallest model (YOLOv5s, 7.2M): tests/api/test_numbers.py
])
def test_a_degenerate_figure_is_422_naming_the_field_and_its_least(client: TestClient, field: str, value: float,
                                                                   least: str) -> None:
    workload: dict[str, object] = {"model": "Qwen2-7B", "samples": 10_000, field: value}
    if field == "params_b":
        del workload["model"]
    r = client.post("/v1/plan", json=workload)
    assert r.status_code == 422, r.text[:300]
    error = r.json()["error"]
    assert field in error["message"] and least in error["message"] and error["fix"]


def test_a_negative_budget_is_422_naming_the_field(client: TestClient) -> None:
    r = client.post("/v1/plan", json={"model": "Qwen2-7B", "samples": 10_000, "budget_cny": -500})
    assert r.status_code == 422
    error = r.json()["error"]
    assert "budget_cny" in error["message"] and "greater than 0" in error["message"] and error["fix"]
