"""evals/scenarios.yaml: its shape (size, languages, kinds) and that every expectation holds on the ground truth,
so a failing expectation in a run always points at the assistant, never at the dataset."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.catalog.loader import Catalog
from service.catalog.queries import resolve_gpu, resolve_model
from service.errors import InvalidInputError
from service.evals.checks import expectation_failures, warning_codes
from service.evals.dataset import Scenario, load_scenarios, select
from service.evals.truth import top, truth_plan

pytestmark = [pytest.mark.slow]  # the whole corpus

SCENARIOS = load_scenarios()


def test_size_and_mix() -> None:
    assert len(SCENARIOS) >= 80
    zh = sum(s.lang == "zh" for s in SCENARIOS)
    assert zh == len(SCENARIOS) - zh  # half Chinese, half English
    assert sum(len(s.turns) > 1 for s in SCENARIOS) >= 10  # follow-ups
    assert sum(s.gold is None for s in SCENARIOS) >= 10  # questions without a workload
    assert sum(s.expect.infeasible is True for s in SCENARIOS) >= 2


@pytest.mark.parametrize("sc", [s for s in SCENARIOS if s.gold is not None and s.intent != "serving"],
                         ids=lambda s: s.id)
def test_expectations_hold_on_the_ground_truth(sc: Scenario, catalog: Catalog) -> None:
    truth = truth_plan(sc.gold or {}, catalog)
    assert truth.error == ""
    assert expectation_failures(sc.expect, truth.plan) == []
    missing = sc.expect.missing_warnings(warning_codes(top(truth.plan)))
    assert missing == []


def test_gold_names_are_catalog_names(catalog: Catalog) -> None:
    for sc in SCENARIOS:
        gold = sc.gold or {}
        if "model" in gold:
            assert resolve_model(gold["model"], catalog.models).id == gold["model"], sc.id
        for name in gold.get("gpu_include", []) + gold.get("gpu_exclude", []) + ([gold["gpu"]] if "gpu" in gold else []):
            resolve_gpu(name, catalog.gpus)  # raises on a GPU the catalog does not know
        if sc.expect.gpu is not None:
            assert resolve_gpu(sc.expect.gpu, catalog.gpus)[0].id == sc.expect.gpu, sc.id


def test_gold_values_are_typed() -> None:
    # YAML 1.1 reads '1.0e10' as a string; the schema turns it into a float before any comparison
    sc = Scenario(id="t", lang="en", turns=["x"], gold={"model": "Qwen2-7B", "tokens": "1.0e10"})
    assert sc.gold == {"model": "Qwen2-7B", "tokens": 1e10}


@pytest.mark.parametrize(
    "gold",
    [
        {"model": "Qwen2-7B", "gpu": "A100"},  # not a workload field
        {"samples": 1000},  # neither model nor size
        {"model": "Qwen2-7B", "method": "full", "quant_bits": 4},  # bits only with QLoRA
        {"model": "Qwen2-7B", "concurrency": 8},  # a serving field in a training scenario
    ],
)
def test_a_gold_the_engine_cannot_take_is_refused(gold: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Scenario(id="t", lang="en", turns=["x"], gold=gold)


@pytest.mark.parametrize(
    "gold",
    [
        {"model": "Qwen2-7B", "method": "lora"},  # a training field in a serving scenario
        {"model": "Qwen2-7B", "concurrency": 8, "request_rate": 2},  # both loads
        {"model": "Qwen2-7B", "weights": "int3"},  # no such weight dtype
    ],
)
def test_a_serving_gold_is_a_serving_workload(gold: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Scenario(id="t", lang="en", turns=["x"], intent="serving", gold=gold)
    ok = Scenario(id="t", lang="en", turns=["x"], intent="serving", gold={"model": "Qwen2-7B", "concurrency": "8"})
    assert ok.gold == {"model": "Qwen2-7B", "concurrency": 8.0}


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    one = "  - {id: a, lang: en, turns: [x], gold: null}\n"
    path.write_text("scenarios:\n" + one + one, encoding="utf-8")
    with pytest.raises(InvalidInputError, match="duplicate"):
        load_scenarios(path)


def test_select_by_id_tag_and_limit() -> None:
    assert [s.id for s in select(SCENARIOS, ("en-ask-zero3",))] == ["en-ask-zero3"]
    assert all("multi-turn" in s.tags for s in select(SCENARIOS, ("multi-turn",)))
    assert len(select(SCENARIOS, limit=3)) == 3
    with pytest.raises(InvalidInputError):
        select(SCENARIOS, ("no-such-id",))


INTENTS = ("plan", "feasibility", "min_gpus", "compare", "savings", "serving", "knowledge")


@pytest.mark.parametrize("intent", INTENTS)
def test_each_question_type_has_eight_real_phrasings_per_language(intent: str) -> None:
    own = [s for s in SCENARIOS if s.intent == intent]  # the real-question cases name their intent
    assert sum(s.lang == "zh" for s in own) >= 8, intent
    assert sum(s.lang == "en" for s in own) >= 8, intent
    if intent not in ("knowledge", "plan"):
        assert any(len(s.turns) > 1 for s in own), f"{intent}: no follow-up"


def test_the_pre_stop_questions_are_kept() -> None:
    turns = {t for s in SCENARIOS for t in s.turns}
    for q in ("3090能跑llama3 8b的qlora吗", "Which is cheaper for a 14B LoRA, A10 or L20?", "72B的lora改成全参要贵多少"):
        assert q in turns


@pytest.mark.parametrize("sc", [s for s in SCENARIOS if s.intent in ("feasibility", "min_gpus", "compare", "savings",
                                                                     "serving")], ids=lambda s: s.id)
def test_question_type_verdicts_hold_on_the_engine(sc: Scenario, catalog: Catalog) -> None:
    from service.evals.intent_checks import intent_truth

    truth = intent_truth(sc, catalog)
    assert truth is not None
    for key in ("starts", "gpus_per_replica", "gpu"):  # serving: the expected properties are the engine's
        if getattr(sc.expect, key) is not None:
            assert truth[key] == getattr(sc.expect, key), key
    if sc.expect.fits is not None:
        assert truth["fits"] is sc.expect.fits
    if sc.expect.gpus_needed is not None:
        assert truth["gpus_needed"] == sc.expect.gpus_needed
    if sc.expect.winner is not None:
        assert truth["winner"] == sc.expect.winner
    if sc.intent == "savings":
        assert truth["delta_cny"] is not None  # both plans priced: a saving to state
    if sc.intent == "compare":
        assert truth["winner"] is not None
