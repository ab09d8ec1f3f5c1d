"""`inference` and `plan-serving`: the JSON contract, the start verdict, and one-line errors (exit 2)."""

from __future__ import annotations

import json

import pytest

INFERENCE_KEYS = {"weights_gib_per_gpu", "kv_bytes_per_token", "kv_capacity_tokens", "max_concurrency", "starts",
                  "starts_reason", "output_tokens_per_s", "ttft_ms", "tpot_ms"}


def _json(result):  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_inference_json_has_the_contract_fields(cli) -> None:  # type: ignore[no-untyped-def]
    out = _json(cli("inference", "--model", "Qwen2.5-14B", "--gpu", "L20", "--max-model-len", "32768",
                    "--input-tokens", "2000", "--output-tokens", "300", "--concurrency", "40", "--json"))
    assert set(out) >= INFERENCE_KEYS
    assert out["starts"] is True and out["gpu"] == "L20" and out["max_model_len"] == 32768
    # Qwen2.5-14B: 48 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 196,608 B per token
    assert out["kv_bytes_per_token"] == 196_608
    assert out["output_tokens_per_s"] > 0 and out["ttft_ms"] > 0 and out["tpot_ms"] > 0
    assert "vllm serve" in out["launch"]["vllm"]


def test_inference_says_why_it_does_not_start(cli) -> None:  # type: ignore[no-untyped-def]
    # Llama-3.1-8B's 131,072-token context asked for on one 24 GB A10: the pool holds ~40k tokens
    out = _json(cli("inference", "--model", "Llama-3.1-8B", "--gpu", "A10", "--gpus", "1", "--max-model-len",
                    "131072", "--json"))
    assert out["starts"] is False and "--max-model-len" in out["starts_reason"]
    assert out["weights_gib_per_gpu"] > 14 and 0 < out["max_model_len_fits"] < 131_072
    assert out["output_tokens_per_s"] is None


def test_an_unasked_context_is_lowered_to_what_the_pool_holds(cli) -> None:  # type: ignore[no-untyped-def]
    # the same card with no context asked: launched with the longest --max-model-len the pool holds, as an
    # operator would, and the answer says so
    out = _json(cli("inference", "--model", "Llama-3.1-8B", "--gpu", "A10", "--gpus", "1", "--json"))
    assert out["starts"] is True and out["max_model_len"] < 131_072
    assert out["max_model_len"] <= out["max_model_len_fits"] < out["max_model_len"] + 1024
    assert f"--max-model-len {out['max_model_len']:,}" in " ".join(out["assumptions"])
    assert f"--max-model-len {out['max_model_len']}" in out["launch"]["vllm"]


def test_int4_on_one_card(cli) -> None:  # type: ignore[no-untyped-def]
    # "int4量化后单卡够不够": Qwen2.5-14B AWQ on one RTX 4090 at 8k
    out = _json(cli("inference", "--model", "Qwen2.5-14B", "--gpu", "4090", "--gpus", "1", "--weights", "int4",
                    "--max-model-len", "8192", "--json"))
    assert out["starts"] is True and out["gpus"] == 1 and out["weights_gib_per_gpu"] < 10


def test_plan_serving_json(cli) -> None:  # type: ignore[no-untyped-def]
    out = _json(cli("plan-serving", "--model", "Qwen2.5-7B", "--gpu", "A10", "--input-tokens", "1000",
                    "--output-tokens", "200", "--concurrency", "8", "--json"))
    assert out["kind"] == "serving" and out["candidates"] and out["picks"]
    c = out["candidates"][0]
    assert {"instance_type", "nodes", "replicas", "gpus_per_replica", "cost_per_month_cny",
            "cny_per_million_output_tokens", "monthly_cny_by_billing", "launch", "sizing"} <= set(c)


def test_plan_serving_writes_the_bundle(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "serve"
    r = cli("plan-serving", "--model", "Qwen2.5-7B", "--gpu", "A10", "--bundle", str(folder))
    assert r.exit_code == 0, r.stderr
    assert (folder / "serve_vllm.sh").is_file() and (folder / "README.md").is_file()


@pytest.mark.parametrize(("args", "needle"), [
    (["--concurrency", "4", "--request-rate", "2"], "not both"),  # two load measures
    (["--concurrency", "-3"], "concurrency"),  # negative
    (["--mem-fraction", "1.2"], "mem_fraction"),  # over 1
])
def test_bad_inference_input_is_one_line(cli, args: list[str], needle: str) -> None:  # type: ignore[no-untyped-def]
    r = cli("inference", "--model", "Qwen2.5-7B", "--gpu", "A10", *args)
    assert r.exit_code == 2 and needle in r.stderr and "Traceback" not in r.stderr


def test_unknown_model_suggests(cli) -> None:  # type: ignore[no-untyped-def]
    r = cli("inference", "--model", "Qwen9-chat", "--gpu", "A10")  # no size stated: nothing to estimate from
    assert r.exit_code == 2 and "Did you mean" in r.stderr
    sized = _json(cli("inference", "--model", "Qwen9-7B", "--gpu", "A10", "--json"))  # a size: estimated
    assert sized["model"]["estimated"] and "Did you mean" in sized["assumptions"][0]


def test_plan_kind_serving_is_plan_serving(cli) -> None:  # type: ignore[no-untyped-def]
    args = ["--model", "Qwen2.5-7B", "--gpu", "A10", "--input-tokens", "1000", "--output-tokens", "200",
            "--concurrency", "8", "--json"]
    via_plan = _json(cli("plan", "--kind", "serving", *args))
    assert via_plan == _json(cli("plan-serving", *args)) and via_plan["kind"] == "serving"


def test_plan_json_is_the_training_contract(cli) -> None:  # type: ignore[no-untyped-def]
    from service.planner.contract import parse_plan
    from service.planner.training_types import TrainingPlan

    out = _json(cli("plan", "--model", "Qwen2-7B", "--method", "qlora", "--json"))
    assert out["kind"] == "training" and isinstance(parse_plan(out), TrainingPlan)


@pytest.mark.parametrize(("args", "needle"), [
    (["--kind", "serving", "--model", "Qwen2.5-7B", "--samples", "1000"], "--samples: a training option"),
    (["--kind", "serving", "--model", "Qwen2.5-7B", "--method", "lora", "--epochs", "2"],
     "--method, --epochs: training options"),  # even the default method, once typed
    (["--model", "Qwen2-7B", "--concurrency", "8"], "--concurrency: a serving option"),  # without --kind serving
    (["--kind", "serving", "--model", "Qwen2.5-7B", "--concurrency", "4", "--request-rate", "2"], "not both"),
])
def test_plan_options_of_the_other_kind_are_named(cli, args: list[str],  # type: ignore[no-untyped-def]
                                                  needle: str) -> None:
    r = cli("plan", *args)
    assert r.exit_code == 2 and needle in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("args", [
    ("inference", "--model", "acme-llm-9b", "--gpu", "L20"),  # serving one GPU type
    ("estimate", "--model", "acme-llm-9b", "--gpu", "A100"),  # one training setup
    ("plan", "--model", "acme-llm-9b"),  # the training plan
])
def test_a_name_with_a_size_is_estimated_and_labelled(cli, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    out = _json(cli(*args, "--json"))
    assert out["model"]["estimated"] is True and out["model"]["params_b"] == 9
    assert out["assumptions"][0].startswith("'acme-llm-9b' is not in the catalog: estimated")
