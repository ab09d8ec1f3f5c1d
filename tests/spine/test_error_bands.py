"""Every memory and time figure an answer shows carries its class's expected error, as the engine computed it."""

from __future__ import annotations

from collections.abc import Callable

from service.questions.turn import Turn


def test_a_feasibility_answer_shows_the_memory_estimate_error(ask: Callable[..., Turn]) -> None:
    t = ask("4090能跑qwen2.5-14b lora吗")
    assert t.answer is not None
    m = t.answer.public()["memory"]
    band = f"估算误差约 ±{round(m['expected_error_pct'])} %，依据同类实测 {m['expected_error_rows']} 条"
    assert m["expected_error_rows"] > 0 and band in t.text.splitlines()[1]


def test_a_plan_shows_memory_and_time_errors_of_its_pick(ask: Callable[..., Turn]) -> None:
    t = ask("Qwen2-7B lora微调，10万条数据")
    assert t.answer is not None
    top = t.answer.public()["plan"]["candidates"][0]
    mem = f"±{round(top['memory']['expected_error_pct'])} %，依据同类实测 {top['memory']['expected_error_rows']} 条"
    time = (f"±{round(top['throughput_expected_error_pct'])} %，依据同类实测 "
            f"{top['throughput_expected_error_rows']} 条")
    assert any("GiB" in line and mem in line for line in t.text.splitlines())
    assert any("小时" in line and time in line for line in t.text.splitlines())


def test_english_answers_say_it_in_english(ask: Callable[..., Turn]) -> None:
    t = ask("can a 4090 run qwen2.5-14b lora?")
    assert "expected error ±" in t.text and "measured runs of its class" in t.text and "估算误差" not in t.text
