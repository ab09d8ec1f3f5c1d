"""Hours seen against the estimate: an epoch is the run's hours over the epochs the estimate assumed (3 when none
are stated), and '一共' makes the hours the whole run's."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from service.questions.turn import Turn


def test_an_epoch_is_the_runs_hours_over_the_assumed_epochs(ask: Callable[..., Turn]) -> None:
    t = ask("qwen2-7b lora 10万条 单卡A10 一个epoch要20小时 正常吗")
    assert t.answer is not None
    a = t.answer.public()
    assert a["estimated_hours_per_epoch"] == pytest.approx(a["training_hours"] / 3, rel=0.01)
    assert f"{a['estimated_hours_per_epoch']:g} 小时" in t.text.splitlines()[0]


def test_hours_in_total_are_the_whole_runs(ask: Callable[..., Turn]) -> None:
    t = ask("qwen2-7b lora 10万条 单卡A10 训了3个epoch 一共用了60小时 正常吗")
    assert t.answer is not None
    a = t.answer.public()
    assert a["whole_run"] is True and a["epochs"] == 3
    assert a["ratio"] == pytest.approx(60 / a["training_hours"], rel=0.01)
    assert "3 个 epoch 全程" in t.text.splitlines()[0]
