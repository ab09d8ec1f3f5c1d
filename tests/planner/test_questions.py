"""The question types over the engine (feasibility, min_gpus, compare, savings) and their answers end to end:
every figure equals the engine's, and the answer opens with the direct verdict in the question's language."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.assistant.service import Assistant
from service.catalog.loader import Catalog
from service.planner.estimate import EstimateRequest, estimate
from service.planner.questions.compare import compare, run_plan, savings
from service.planner.questions.fit import feasibility, min_gpus
from service.questions.compare import CompareAnswer
from service.questions.feasibility import FeasibilityAnswer
from service.questions.min_gpus import MinGpusAnswer
from service.questions.savings import SavingsAnswer
from service.settings import Settings
from service.workload import Workload
from tests.assistant.test_agent import FakeRetriever

QWEN14_LORA = Workload(model="Qwen2.5-14B", method="lora")


def test_a_14b_lora_does_not_fit_a_4090_and_qlora_does(catalog: Catalog) -> None:
    out = feasibility(catalog, QWEN14_LORA, "4090")
    engine = estimate(EstimateRequest(QWEN14_LORA, "RTX-4090", 1), catalog)
    assert out["fits"] is False and out["per_gpu_gib"] == engine["memory"]["per_gpu_gib"]
    changes = {f["change"]: f for f in out["fits_with"]}
    assert changes["qlora"]["fits"] and changes["qlora"]["gpu_count"] == 1
    assert out["rent"] == [] and out["form_factor"] == "consumer"  # no cloud here rents a 4090
    assert out["gpus_needed"] is not None and out["gpus_needed"] > 1


def test_a_rented_gpu_says_where(catalog: Catalog) -> None:
    out = feasibility(catalog, Workload(model="Qwen2-7B", method="lora"), "L20")
    assert out["fits"] is True and out["gpus_needed"] == 1
    assert {r["cloud"] for r in out["rent"]} == {"tencent"}


def test_min_gpus_is_the_fewest_that_fit(catalog: Catalog) -> None:
    w = Workload(model="Qwen2.5-14B", method="full")
    out = min_gpus(catalog, w, "A100")
    n = out["gpus_needed"]
    assert n is not None and n > 1
    fewer = n - 1 if n <= 8 else n - 8  # any count within a server, whole servers beyond
    sized = estimate(EstimateRequest(w.model_copy(update={"zero_stage": 3 if fewer > 1 else None}), out["gpu"],
                                     fewer), catalog)
    assert sized["fits"] is False


def test_least_memory_without_a_gpu(catalog: Catalog) -> None:
    out = min_gpus(catalog, Workload(model="Mixtral-8x7B", method="qlora"), None)
    assert out["gpu"] is None and out["min_memory_gib"] > out["single_gpu_gib"]
    assert [o["gpu"] for o in out["options"]] == ["RTX-4090", "L20", "A100-80G-SXM", "H20"]


def test_compare_picks_the_cheapest_and_keeps_unpriced_gpus(catalog: Catalog) -> None:
    w = Workload(params_b=14, method="lora")
    out = compare(catalog, w, "gpu", ["A10", "L20", "4090"])
    rows = {r["option"]: r for r in out["comparison"]}
    a10 = run_plan(catalog, w.model_copy(update={"gpu_include": ["A10"]}), 180)["candidates"][0]
    assert rows["A10"]["cost_cny"] == a10["total_cost_cny"]
    assert out["winner"] == min(("A10", "L20"), key=lambda o: rows[o]["cost_cny"])
    assert rows["RTX-4090"]["priced"] is False and out["unpriced"] == ["RTX-4090"]


def test_savings_is_the_difference_of_the_two_plans(catalog: Catalog) -> None:
    after = Workload(model="Qwen2.5-14B", method="lora", samples=100000)
    before = after.model_copy(update={"method": "full"})
    out = savings(catalog, before, after)
    b = run_plan(catalog, before, 180)["candidates"][0]["total_cost_cny"]
    a = run_plan(catalog, after, 180)["candidates"][0]["total_cost_cny"]
    assert out["delta_cny"] == pytest.approx(a - b, abs=0.01) and out["saving_cny"] > 0


@pytest.fixture(scope="module")
def assistant(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    s = Settings(data_dir=Path(tmp_path_factory.mktemp("intents")), llm="offline")
    return Assistant(s, retriever_factory=FakeRetriever)


@pytest.mark.parametrize(("turns", "intent", "first"), [
    (["4090能跑qwen2.5-14b lora吗"], "feasibility", "不能。"),  # the first example
    (["3090能跑llama3 8b的qlora吗"], "feasibility", "能。"),
    (["can a single 4090 handle qwen2.5-14b lora?"], "feasibility", "No."),
    (["全参微调qwen2.5-14b需要几张a100"], "min_gpus", "至少需要"),
    (["Which is cheaper for a 14B LoRA, A10 or L20?"], "compare", ""),
    (["72B的lora改成全参要贵多少"], "savings", "要多花"),
    (["qwen2.5-14b全参微调 10万条", "改成lora的话能省多少"], "savings", "能省"),
    (["用A10跑qwen2.5-7b lora可以吗", "那换成14b呢"], "feasibility", ""),  # the follow-up keeps the question type
])
def test_answers_lead_with_the_verdict(assistant: Assistant, turns: list[str], intent: str, first: str) -> None:
    sid = None
    for t in turns:
        r = assistant.ask(t, sid, create=sid is None)
        sid = r.session_id
    assert r.intent == intent, r.answer_markdown
    assert r.answer_markdown.startswith(first)
    a = r.answer
    if intent in ("feasibility", "min_gpus"):
        assert isinstance(a, FeasibilityAnswer | MinGpusAnswer) and a.gpu
    if intent == "compare":
        assert isinstance(a, CompareAnswer) and a.winner in {row.option for row in a.comparison}
        assert r.answer_markdown.startswith(a.winner)
    if intent == "savings":
        assert isinstance(a, SavingsAnswer) and a.delta_cny is not None
    assert r.workload is not None and r.prose_check == []
