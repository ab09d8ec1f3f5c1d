"""A conversation keeps only what continues (issue 36 "Conversations keep only what continues"): a follow-up changes
some fields of the last question and says what it carried; a new question starts from defaults. Over the
synthetic catalog (tests/fixtures/mini_knowledge): A10 and L20 and A100-40G and H800 on Tencent, V100 on JD."""

from __future__ import annotations

from collections.abc import Callable

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
