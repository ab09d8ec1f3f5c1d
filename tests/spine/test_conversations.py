"""A conversation keeps only what continues (issue 36 "Conversations keep only what continues"): a follow-up changes
some fields of the last question and says what it carried; a new question starts from defaults. Over the
synthetic catalog (tests/fixtures/mini_knowledge): A10 and L20 and A100-40G and H800 on Tencent, V100 on JD."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from service.questions.turn import Conversation, Turn, previous_of

Ask = Callable[..., Turn]


def _talk(ask: Ask, *messages: str) -> list[Turn]:
    """Each message in one conversation, as the assistant runs it: the last question stored and continued."""
    turns: list[Turn] = []
    texts: list[str] = []
    for m in messages:
        prev = previous_of(turns[-1].workload, turns[-1].type) if turns else None
        turns.append(ask(m, Conversation(prev=prev, user_texts=tuple(texts))))
        texts.append(m)
    return turns


def _first(t: Turn) -> str:
    return next(ln for ln in t.text.splitlines() if ln.strip())


def test_a_chinese_count_follow_up_changes_the_count_and_says_what_it_kept(ask: Ask) -> None:
    first, then = _talk(ask, "4090能跑qwen2 7b lora吗", "那两张呢")
    assert first.type == then.type == "feasibility"
    assert then.args is not None and then.args["gpu_count"] == 2 and then.args["gpu"] == "RTX-4090"
    assert "按上文" in then.text and "Qwen2-7B" in then.text


def test_an_english_count_follow_up_counts_the_card_named_before(ask: Ask) -> None:
    # was: 'what about two of them?' answered for one card again
    _, then = _talk(ask, "can one 4090 fine-tune qwen2 7b with lora?", "what about two of them?")
    assert then.args is not None and then.args["gpu_count"] == 2
    assert _first(then).startswith("Yes. 2")


def test_a_method_follow_up_keeps_the_card(ask: Ask) -> None:
    _, then = _talk(ask, "Qwen2-7B LoRA 单卡A100能跑吗", "那全参呢")
    assert then.type == "feasibility" and then.args is not None
    assert (then.args["method"], then.args["gpu"]) == ("full", "A100-40G-SXM")


def test_a_dtype_follow_up_in_english_keeps_the_serving_question(ask: Ask) -> None:
    _, then = _talk(ask, "Qwen2.5-14B 单卡L20 部署 40并发 能扛住吗", "with FP8?")
    assert then.type == "serving" and then.args is not None
    assert (then.args["weights"], then.args["gpu"], then.args["concurrency"]) == ("fp8", "L20", 40)


def test_a_cloud_follow_up_for_a_card_that_cloud_does_not_rent_says_so(ask: Ask) -> None:
    _, then = _talk(ask, "Qwen2.5-14B 单卡L20 部署 40并发 能扛住吗", "and on JD Cloud?")
    assert _first(then).startswith("JD Cloud does not rent the")


def test_a_new_question_carries_no_budget_or_cloud_filter(ask: Ask) -> None:
    # was: a monthly training budget and a 'JD Cloud only' filter carried into an unrelated serving question
    _, then = _talk(ask, "Qwen2-7B LoRA 10万条，预算月均¥5000，只用京东云", "上线一个Qwen2.5-14B的对话服务要几张卡")
    assert then.type == "serving" and then.args is not None
    assert "budget_cny" not in then.args and not then.args.get("clouds")
    assert "按上文" not in then.text


def test_a_new_catalog_question_after_a_plan_is_read_on_its_own(ask: Ask) -> None:
    _, then = _talk(ask, "只用京东云，Qwen2-7B LoRA 10万条怎么租", "A10一小时多少钱")
    assert then.type == "catalog" and "京东云" not in _first(then)


def test_a_budget_follow_up_keeps_the_job(ask: Ask) -> None:
    _, then = _talk(ask, "Qwen2-7B LoRA 10万条 预算每月3000", "预算改成8000呢")
    assert then.type == "plan" and then.args is not None
    assert (then.args["budget_cny"], then.args["samples"], then.args["model"]) == (8000, 100000, "Qwen2-7B")


def test_another_model_keeps_the_data_and_says_so(ask: Ask) -> None:
    _, then = _talk(ask, "qwen2 7b lora 5万条 怎么租", "那换成qwen2.5 14b呢")
    assert then.args is not None and (then.args["model"], then.args["samples"]) == ("Qwen2.5-14B", 50000)
    assert "按上文" in then.text and "50,000" in then.text


def test_a_count_follow_up_that_points_back_counts_the_last_job(ask: Ask) -> None:
    # was: 'how many A10s would that take?' asked "which model?" after a full fine-tune plan
    _, then = _talk(ask, "Full fine-tune Qwen2-7B on 100k samples", "how many A10s would that take?")
    assert then.type == "min_gpus" and then.args is not None
    assert (then.args["model"], then.args["method"], then.args["gpu"]) == ("Qwen2-7B", "full", "A10")
    assert "As before" in then.text


def test_is_a_card_enough_after_a_plan_is_that_plan_on_the_card(ask: Ask) -> None:
    _, then = _talk(ask, "LoRA Qwen2-7B on 50k samples", "is an L20 enough?")
    assert then.type == "feasibility" and then.args is not None
    assert (then.args["model"], then.args["gpu"]) == ("Qwen2-7B", "L20")
    assert _first(then).startswith("Yes")


def test_a_saving_asked_with_no_job_of_its_own_is_the_last_jobs(ask: Ask) -> None:
    # was: '包月能省多少钱' after a plan asked which model
    _, then = _talk(ask, "Qwen2-7B LoRA 20万条 按量", "包月能省多少钱")
    assert then.type == "savings" and then.args is not None
    assert then.args["model"] == "Qwen2-7B" and then.args["billing"] == "monthly"
    assert "按上文" in then.text and "¥" in _first(then)


def test_a_new_catalog_question_after_a_plan_carries_nothing(ask: Ask) -> None:
    _, then = _talk(ask, "Qwen2-7B LoRA 10万条 预算每月3000", "H800一小时多少钱")
    assert then.type == "catalog" and "按上文" not in then.text


def test_a_latency_target_is_a_serving_question_not_a_slow_run(ask: Ask) -> None:
    # was: answered as a diagnosis of a slow server ('不正常，偏慢') because '首字延迟要低于500ms' read as seen
    t = ask("部署Qwen2-7B，首字延迟要低于500ms，每秒20个请求", Conversation())
    assert t.type == "serving" and t.args is not None
    assert (t.args["ttft_ms"], t.args["request_rate"]) == (500.0, 20.0)


def test_a_measured_run_scaled_to_other_cards_costs_both_at_the_measured_hours(ask: Ask) -> None:
    # was: 'about 20 h' from a 30 h run, then 'saves ¥38 (¥83 -> ¥45), 1.1 -> 0.8 h' for the estimate's own job
    t = ask("4张A10训了30小时 换成8张A100大概要多久", Conversation())
    assert t.type == "savings" and t.answer is not None
    a = t.answer
    assert a.observed_hours == 30.0 and a.measured_before is not None and a.measured_after is not None
    k = 30.0 / a.before.hours
    assert a.measured_before.hours == 30.0 and a.measured_after.hours == a.scaled_hours
    assert a.measured_before.cost_cny == pytest.approx(a.before.cost_cny * k, abs=0.01)
    second = t.text.splitlines()[1]
    assert f"¥{a.measured_before.cost_cny:,.0f}" in second and "30.0 →" in second
