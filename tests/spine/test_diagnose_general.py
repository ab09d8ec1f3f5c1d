"""A diagnosis the engine cannot size (issue 37): no model named, or one the catalog does not hold, still answers
with the verdict and the cause the stated setup points to first, its fix, the model asked for; a sized diagnosis
adds the causes that need no size which it does not name itself. From the frame, over the synthetic catalog."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from service.assistant.prompts import phrases
from service.catalog.loader import Catalog
from service.frame import Frame, Hardware, Knobs, Outcome, Setup
from service.questions.base import Ask, Context, Missing
from service.questions.diagnose import MODULE
from service.questions.diagnose_answer import DiagnoseAnswer, DiagnoseArgs

ROOT = Path(__file__).resolve().parents[2]


def _ask(frame: Frame, lang: str = "zh") -> Ask:
    return Ask(frame=frame, lang=lang, reading=SimpleNamespace(slots={}))  # type: ignore[arg-type]


def _answer(mini: Catalog, frame: Frame, lang: str = "zh") -> tuple[DiagnoseAnswer, str]:
    routed = MODULE.route(_ask(frame, lang))
    assert not isinstance(routed, Missing), routed
    answer = MODULE.run(Context.of(mini, max_price_age_days=100_000), DiagnoseArgs.model_validate(routed))
    assert isinstance(answer, DiagnoseAnswer)
    return answer, MODULE.render(answer, phrases(ROOT / "prompts", lang))


def _setup(knobs: dict[str, Any] | None = None, hardware: dict[str, Any] | None = None,
           seen: dict[str, Any] | None = None, **top: Any) -> Setup:
    return Setup(knobs=Knobs(**(knobs or {})), hardware=Hardware(**(hardware or {})),
                 outcome=Outcome(**(seen or {})) if seen else None, **top)


def test_no_model_named_answers_the_cause_first(mini: Catalog) -> None:
    frame = Frame(task="train", asked="cause", setups=(_setup({"attention": "flash"}, {"gpu": "V100"},
                                                              {"status": "error", "kind": "error"}),))
    answer, text = _answer(mini, frame)
    first = text.splitlines()[0]
    assert answer.expected is True and answer.general is not None and answer.general.ask == "model"
    assert first.startswith("正常：FlashAttention-2 只支持 Ampere") and "7.0" in first
    assert text.splitlines()[1].startswith("改法：") and "sdpa" in text
    assert "告诉我模型名或参数量" in text and "要分清是哪一个" not in text  # the setup decides: nothing to tell apart


def test_an_unknown_model_is_said_and_the_cause_still_answers(mini: Catalog) -> None:
    dpo = _setup(seen={"status": "oom", "kind": "oom"}, objective="dpo", role="failed",
                 models=({"name": "NoSuchModel-X"},), hardware={"gpu": "A10"})
    sft = _setup(seen={"status": "worked"}, objective="sft", role="worked")
    answer, text = _answer(mini, Frame(task="train", asked="cause", setups=(sft, dpo), asked_setup=1))
    assert answer.unknown_model == "NoSuchModel-X" and answer.expected is True
    assert text.splitlines()[0].startswith("正常：DPO / PPO") and "目录里没有模型「NoSuchModel-X」" in text


def test_no_cause_in_the_setup_asks_for_the_model() -> None:
    frame = Frame(task="train", asked="cause", setups=(_setup(seen={"status": "oom", "kind": "oom"}),))
    assert MODULE.route(_ask(frame)) == Missing("model")


def test_two_likeliest_when_the_setup_does_not_decide_in_english(mini: Catalog) -> None:
    frame = Frame(task="train", asked="cause", language="en",
                  setups=(_setup({"strategy": "ddp"}, {"gpu_count": 8}, {"status": "slow", "kind": "scaling"}),))
    answer, text = _answer(mini, frame, "en")
    lines = text.splitlines()
    assert answer.expected is None
    assert lines[0].startswith("Most likely: data parallel training all-reduces the gradients")
    assert any(x.startswith("It may also be: on N GPUs each step processes") for x in lines)
    assert any(x.startswith("One figure tells them apart: the GPU utilisation") for x in lines)


def test_a_sized_diagnosis_adds_the_causes_it_does_not_name(mini: Catalog) -> None:
    dpo = _setup({"seq_len": 1024}, {"gpu": "A10", "gpu_count": 1}, {"status": "oom", "kind": "oom"},
                 objective="dpo", method="lora", models=({"id": "Qwen2-7B", "name": "Qwen2-7B"},))
    answer, text = _answer(mini, Frame(task="train", asked="cause", setups=(dpo,)))
    assert answer.sized and answer.general is None
    assert [c.code for c in answer.general_also][:1] == ["g_ref_model"]
    assert "也可能是：DPO / PPO" in text


def test_a_cause_that_decides_what_the_figures_left_open_leads(mini: Catalog) -> None:
    run = _setup({"engine": "ollama", "max_model_len": 128000, "weights": "int4"}, {"gpu": "L20", "gpu_count": 1},
                 {"status": "slow", "kind": "slow"}, models=({"id": "Qwen2-7B", "name": "Qwen2-7B"},))
    answer, text = _answer(mini, Frame(task="serve", asked="cause", setups=(run,), language="en"), "en")
    assert answer.general_leads and answer.expected is True
    lines = text.splitlines()
    assert lines[0].startswith("Expected: with num_ctx at 128000 tokens Ollama") and lines[1].startswith("Fix: ")
    assert text.count("with num_ctx at 128000") == 1  # not said again among the other causes


def test_every_general_cause_has_chinese_words_without_english_prose() -> None:
    import re

    import yaml

    from service.checks.english import english_runs

    table = yaml.safe_load((ROOT / "prompts" / "questions" / "diagnose.yaml").read_text(encoding="utf-8"))
    zh, en = table["zh"]["dg"], table["en"]["dg"]
    source = "".join((ROOT / "service" / "planner" / "causes" / f).read_text(encoding="utf-8")
                     for f in ("general.py", "general_serve.py"))
    made = re.findall(r'cause_of\("(\w+)"(?:, "(\w+)")?', source)
    assert len(made) >= 20
    for code, fix in made:  # every cause and fix the engine makes has its words, in both languages
        for lang in (zh, en):
            assert f"g_{code}" in lang["cause"] and (not fix or f"g_{fix}" in lang["fix"]), code
    texts = [*zh["cause"].values(), *zh["fix"].values(), *zh["check"].values()]
    assert [t for t in texts if english_runs(t)] == []


def test_a_server_on_a_card_given_by_its_memory_is_sized_on_a_card_of_that_memory(ask: Any) -> None:
    # was: '单卡24G显存 启动就OOM' sized on the default A100 80GB ("能起来 … OOM 不是启动时的显存账造成的")
    t = ask("vllm起qwen2-7b 单卡24G显存 启动就OOM 为啥")
    assert t.type == "diagnose" and t.error is None
    assert "A100" not in t.text and "A10" in t.text


def test_a_mostly_idle_gpu_is_named_before_asking_for_the_model(mini: Catalog) -> None:
    """'8卡a800训练 gpu util 一直40%上下 数据放cfs上': the utilisation says the GPU waits; no model is needed to say so."""
    frame = Frame(task="train", asked="cause", setups=(_setup(None, {"gpu": "A800", "gpu_count": 8},
                                                              {"status": "slow", "kind": "util", "util_pct": 40}),))
    answer, text = _answer(mini, frame)
    first = text.splitlines()[0]
    assert answer.expected is False and first.startswith("不正常：GPU 利用率只有 40%，约 60% 的时间 GPU 在等")
    assert "CFS" in first and text.splitlines()[1].startswith("改法：")
    busy = Frame(task="train", asked="cause", setups=(_setup(None, {"gpu": "A800", "gpu_count": 8},
                                                             {"status": "slow", "kind": "util", "util_pct": 85}),))
    routed = MODULE.route(_ask(busy))
    assert isinstance(routed, Missing) or "GPU 利用率只有" not in _answer(mini, busy)[1]  # busy: not this cause


def test_no_utilisation_at_all_or_several_machines_is_not_a_slow_data_loader(mini: Catalog) -> None:
    for hardware, util in (({"gpu": "A800", "gpu_count": 8}, 0), ({"gpu": "A800", "gpu_count": 16, "nodes": 2}, 40)):
        frame = Frame(task="train", asked="cause", setups=(_setup(None, hardware, {"status": "slow", "kind": "util",
                                                                                   "util_pct": util}),))
        routed = MODULE.route(_ask(frame))
        assert isinstance(routed, Missing) or "GPU 利用率只有" not in _answer(mini, frame)[1], (hardware, util)
