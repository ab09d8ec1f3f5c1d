"""`--json` output of estimate, plan and catalog matches the public contract."""

from __future__ import annotations

import json

PRICE_KEYS = {"price_cny", "unit", "source", "as_of", "confidence"}
CANDIDATE_KEYS = {"cloud", "instance_type", "gpu", "gpu_count", "nodes", "vcpus", "memory_gib", "strategy",
                  "memory_per_gpu_gib", "gpu_memory_gib", "training_hours", "cost_cny", "billing", "price",
                  "within_budget", "meets_deadline", "warnings"}
MEMORY_KEYS = {"per_gpu_gib", "weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "overhead_gib"}
# Issue 22: allocated and reserved apart, with the terms between them (keys added, none removed)
MEMORY_DETAIL_KEYS = {"allocated_gib", "reserved_gib", "buffers_gib", "allocator_gib", "runtime_gib",
                      "paged_optimizer_gib", "expected_error_pct", "expected_error_rows", "expected_error_class"}


def _json(result):  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_estimate_json(cli) -> None:
    out = _json(cli("estimate", "--model", "Qwen2-7B", "--gpu", "A100-80GB", "--method", "lora", "--json"))
    assert {"model", "memory", "gpu_memory_gib", "fits", "throughput_tokens_per_s", "training_hours",
            "assumptions", "warnings"} <= set(out)
    assert out["model"]["id"] == "Qwen2-7B"
    mem = out["memory"]
    assert set(mem) == MEMORY_KEYS | MEMORY_DETAIL_KEYS
    parts = sum(mem[k] for k in MEMORY_KEYS - {"per_gpu_gib"})
    assert abs(parts - mem["per_gpu_gib"]) < 0.05  # the total is the sum of the reported terms
    assert abs(mem["reserved_gib"] - mem["allocated_gib"] - mem["allocator_gib"]) < 0.05
    assert abs(mem["per_gpu_gib"] - mem["reserved_gib"] - mem["runtime_gib"]) < 0.05
    v = out["memory_verdict"]
    assert v["status"] == out["verdict"] == "fits" and v["margin_gib"] > 0
    assert any("LLaMA-Factory" in a for a in out["assumptions"])  # the framework defaults are stated
    assert out["gpu_memory_gib"] == 80 and out["fits"] is True
    assert out["throughput_tokens_per_s"] > 0 and out["training_hours"] > 0
    assert all(isinstance(a, str) for a in out["assumptions"])
    assert any("ambiguous" in a for a in out["assumptions"])  # 'A100-80GB' -> SXM4, said so


def test_plan_json(cli) -> None:
    out = _json(cli("plan", "--model", "Qwen2-7B", "--samples", "100000", "--budget-cny", "3000", "--json"))
    assert {"workload", "candidates", "rejected", "assumptions"} <= set(out)
    assert out["workload"]["model"] == "Qwen2-7B" and out["workload"]["budget_cny"] == 3000
    assert out["candidates"]
    for c in out["candidates"]:
        assert set(c) >= CANDIDATE_KEYS, CANDIDATE_KEYS - set(c)
        assert c["cloud"] in ("tencent", "jdcloud") and c["meets_deadline"] is None  # no deadline given
        if c["price_on_request"]:  # no public price: sized and timed, never costed; the quote says where to ask
            assert c["billing"] == "on_request" and c["price"] is None and c["total_cost_cny"] is None
            assert c["within_budget"] is None and c["quote"]["link"].startswith("https://")
            continue
        assert set(c["price"]) >= PRICE_KEYS
        assert c["billing"] in c["cost_cny"]
        assert isinstance(c["within_budget"], bool)
        assert c["memory_per_gpu_gib"] <= c["gpu_memory_gib"]
    for r in out["rejected"]:
        assert set(r) >= {"instance_type", "reason"} and r["reason"]
    assert out["assumptions"]


def test_catalog_list_json(cli) -> None:
    rows = _json(cli("catalog", "list", "--cloud", "jdcloud", "--json"))
    assert rows and {r["cloud"] for r in rows} == {"jdcloud"}
    for r in rows:
        assert r["source"] and r["as_of"]
        for p in r["prices"]:
            assert set(p) >= PRICE_KEYS
    a100 = _json(cli("catalog", "list", "--gpu", "A100", "--json"))
    assert a100 and {r["gpu"].split("-")[0] for r in a100} == {"A100"}


def test_catalog_show_a10_has_no_fp8(cli) -> None:
    out = _json(cli("catalog", "show", "A10", "--json"))
    assert out["supports_fp8"] is False and out["fp8_tflops"] is None
    assert "PNV4.7XLARGE116" in out["sold_as"]


def test_catalog_show_an_instance(cli) -> None:
    out = _json(cli("catalog", "show", "gt4.4xlarge96", "--json"))
    assert out["instance_type"] == "GT4.4XLARGE96" and out["gpu"] == "A100-40G-SXM"
    assert {p["billing"] for p in out["prices"]} >= {"on_demand", "monthly"}


def test_catalog_validate_ok(cli) -> None:
    result = cli("catalog", "validate")
    assert result.exit_code == 0
    assert result.stdout.startswith("ok: ")
