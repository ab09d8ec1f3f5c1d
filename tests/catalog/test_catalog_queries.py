"""Name resolution (GPUs, models) with 'did you mean', sizes, and price selection."""

from __future__ import annotations

from datetime import date

import pytest

from service.catalog.queries import (
    best_price,
    match_model,
    normalize,
    parse_param_count,
    resolve_gpu,
    resolve_model,
    weights_from_name,
)
from service.catalog.schema import ModelSpec, PriceRow
from service.errors import UnknownGpuError, UnknownModelError


@pytest.mark.parametrize(
    ("name", "gpu_id", "ambiguous"),
    [
        ("A100-80GB", "A100-80G-SXM", True),  # capacity given, form factor not: the SXM4 board clouds sell
        ("a100 80g", "A100-80G-SXM", True),  # case, space, "g" for GB
        ("A100", "A100-40G-SXM", True),  # bare: Tencent GT4 / HCC sell the 40GB SXM4
        ("H800", "H800-SXM", True),  # bare: the SXM5 board
        ("4090", "RTX-4090", False),  # alias
        ("NVIDIA Tesla T4", "T4", False),  # vendor words dropped
        ("A100 40G PCIe", "A100-40G-PCIE", False),  # explicit form factor
        ("V100", "V100-32G-SXM2", True),  # Tencent GN10X / GN10Xp: V100 NVLink 32GB
        ("英伟达 H20", "H20", False),  # Chinese vendor name
    ],
)
def test_gpu_names(catalog, name: str, gpu_id: str, ambiguous: bool) -> None:
    g, note = resolve_gpu(name, catalog.gpus)
    assert g.id == gpu_id
    assert bool(note) is ambiguous
    if ambiguous:
        assert g.name in note  # the note names the form we took


def test_unknown_gpu_suggests(catalog) -> None:
    with pytest.raises(UnknownGpuError) as err:
        resolve_gpu("A1OO", catalog.gpus)
    assert err.value.suggestions
    assert any(s.startswith("A10") for s in err.value.suggestions)
    assert "catalog list" in str(err.value)


@pytest.mark.parametrize(
    ("name", "model_id"),
    [
        ("qwen2 7b", "Qwen2-7B"),  # case and space
        ("Llama3-70B", "Llama-3-70B"),  # dash dropped
        ("千问2-7B", "Qwen2-7B"),  # Chinese family name
        ("通义千问2.5-14B", "Qwen2.5-14B"),
        ("Qwen2-7B-Instruct", "Qwen2-7B"),  # instruct shares the base architecture
        ("qwen2.5-7b-instruct", "Qwen2.5-7B"),  # suffix fallback, not an alias
        ("meta-llama/Llama-2-7b-chat-hf", "Llama-2-7B"),  # HF repo id with -chat-hf
        ("deepseek-r1:7b", "DeepSeek-R1-Distill-Qwen-7B"),  # Ollama tag
        # the names of issue "Every model people ask about", on the shipped catalog
        ("qwen3 vl 235b", "Qwen3-VL-235B-A22B"),
        ("千问3-8B", "Qwen3-8B"),
        ("文心4.5-21B-A3B", "ERNIE-4.5-21B-A3B"),
        ("kimi k2", "Kimi-K2"),
        ("glm4.5 air", "GLM-4.5-Air"),
        ("glm-4.5-air", "GLM-4.5-Air"),
        ("Qwen/Qwen3-Next-80B-A3B-Instruct", "Qwen3-Next-80B-A3B"),
        ("Qwen3-30B-A3B-Instruct-2507-FP8", "Qwen3-30B-A3B-2507"),  # an HF id alias matches without its org too
        ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", "Llama-4-Maverick-17B-128E"),
        ("混元 A13B", "Hunyuan-A13B"),
    ],
)
def test_model_names(catalog, name: str, model_id: str) -> None:
    assert resolve_model(name, catalog.models).id == model_id


def test_a_family_without_a_size_suggests_its_rows(catalog) -> None:
    # '文心4.5' names the ERNIE-4.5 family (0.3B ... 300B-A47B), not one model: the rows are suggested
    with pytest.raises(UnknownModelError) as err:
        resolve_model("文心4.5", catalog.models)
    assert any(s.startswith("ERNIE-4.5") for s in err.value.suggestions)


@pytest.mark.parametrize(("name", "expect"), [("Qwen2-7", "Qwen2-7B"), ("Lama-2-7B", "Llama-2-7B"), ("qwen", "Qwen")])
def test_unknown_model_suggests(catalog, name: str, expect: str) -> None:
    with pytest.raises(UnknownModelError) as err:
        resolve_model(name, catalog.models)
    assert any(s.startswith(expect) for s in err.value.suggestions)
    assert "config.json" in err.value.fix  # says how to size an unlisted model


def test_normalize_is_unit_and_separator_insensitive() -> None:
    assert normalize("A100-80GB") == normalize("a100 80g") == normalize("A100 80 GB".replace(" GB", "GB"))


@pytest.mark.parametrize(("text", "billions"), [("7B", 7.0), ("0.5b", 0.5), ("350M", 0.35), ("Qwen2-7B", None)])
def test_parse_param_count(text: str, billions: float | None) -> None:
    assert parse_param_count(text) == billions


def _p(billing: str = "on_demand", **kw: object) -> PriceRow:
    fields: dict[str, object] = dict(instance_type="X.1", billing=billing, price_cny=1.0, unit="hour", source="s",
                                     as_of=date(2026, 1, 1), confidence="official")
    fields.update(kw)
    return PriceRow(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("container", [list, tuple])  # tuples go through the cached index
def test_best_price_order(container: type) -> None:
    rows = container([
        _p(price_cny=1, confidence="estimate"),
        _p(price_cny=2, confidence="third_party"),
        _p(price_cny=3, confidence="official", as_of=date(2025, 1, 1)),
        _p(price_cny=4, confidence="official", region="ap-beijing"),
        _p(price_cny=5, confidence="official", stale=True),
    ])
    # official beats third_party beats estimate; the default region beats a regional quote; stale rows lose.
    best = best_price("X.1", "on_demand", rows)
    assert best is not None and best.price_cny == 3
    newer = container([*rows, _p(price_cny=6, confidence="official", as_of=date(2026, 6, 1))])
    best = best_price("X.1", "on_demand", newer)
    assert best is not None and best.price_cny == 6  # newest among equals
    assert best_price("X.1", "monthly", rows) is None


def _model(model_id: str, aliases: list[str] | None = None) -> ModelSpec:
    return ModelSpec(id=model_id, name=model_id, family="test", kind="decoder", aliases=aliases or [], num_layers=2,
                     hidden_size=64, num_heads=4, intermediate_size=96, params_published_b=7, source="test",
                     as_of=date(2026, 1, 1))


# Three rows: a plain one, one with a Chinese alias, one whose id ends like a suffix would ('-it' is its name).
TABLE = (_model("Qwen3-8B", ["千问3-8B"]), _model("GLM-4.5-Air", ["zai-org/GLM-4.5-Air"]), _model("Kimi-K2"))


@pytest.mark.parametrize(("name", "model_id", "weights"), [
    ("Qwen/Qwen3-8B", "Qwen3-8B", None),  # an org prefix the aliases do not list
    ("Qwen3-8B-Instruct", "Qwen3-8B", None),  # chat build: same dims, 16-bit
    ("Qwen3-8B-AWQ", "Qwen3-8B", "int4"),
    ("Qwen/Qwen3-8B-Instruct-GPTQ-Int4", "Qwen3-8B", "int4"),  # two suffixes
    ("qwen3-8b-gptq-int8", "Qwen3-8B", "int8"),
    ("Qwen3-8B-FP8", "Qwen3-8B", "fp8"),
    ("Qwen3-8B-GGUF", "Qwen3-8B", "int4"),  # GGUF with no level named: read as 4-bit
    ("Qwen3-8B-Q8_0-GGUF", "Qwen3-8B", "int8"),  # a named level wins
    ("unsloth/Qwen3-8B-bnb-4bit", "Qwen3-8B", "int4"),
    ("千问3-8B", "Qwen3-8B", None),
    ("通义千问3 8b", "Qwen3-8B", None),
    ("glm4.5 air", "GLM-4.5-Air", None),  # spaces, dots and dashes fold
    ("glm-4.5-air", "GLM-4.5-Air", None),
    ("kimi k2", "Kimi-K2", None),
    ("月之暗面 Kimi-K2", "Kimi-K2", None),  # the company's name folds away
])
def test_match_model_falls_back_to_the_base_row_and_says_the_weights(name: str, model_id: str,
                                                                     weights: str | None) -> None:
    m = match_model(name, TABLE)
    assert (m.spec.id, m.weights) == (model_id, weights)
    assert resolve_model(name, TABLE).id == model_id  # the plain resolver, as every caller used it
    assert weights_from_name(name) == weights


def test_a_suffix_is_only_dropped_to_reach_a_row() -> None:
    with pytest.raises(UnknownModelError):
        match_model("Qwen3-9B-AWQ", TABLE)  # no Qwen3-9B: the suffix does not make a match
    assert match_model("Qwen3-8B", TABLE).suffix == ""
    assert match_model("Qwen3-8B-Instruct-AWQ", TABLE).suffix == "instructawq"
