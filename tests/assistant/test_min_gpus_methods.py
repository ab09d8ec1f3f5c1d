"""'训练72b要多少显存' names no method: the answer counts LoRA (the default) and says what full fine-tuning and QLoRA
would take on an 80 GB card; a question that names its method gets no such line."""

from __future__ import annotations

from typing import Any


def test_no_method_named_gives_the_other_methods_counts(assistant: Any) -> None:
    r = assistant.ask("请问如果想训练72b的模型，大概需要多少显存呢")
    answer = str(r.answer_markdown)
    assert r.intent == "min_gpus"
    line = next(x for x in answer.splitlines() if x.startswith("没说训练方法"))
    assert "上面按 LoRA 微调算" in line and "全参微调" in line and "QLoRA 微调" in line and "A100 80G SXM" in line
    full = int(line.split("全参微调 ")[1].split(" 张")[0])
    qlora = int(line.split("QLoRA 微调 ")[1].split(" 张")[0])
    assert full > 8 > qlora  # 72B full fine-tuning needs more than one 8-GPU node of 80 GB cards; QLoRA fits on one


def test_a_named_method_gets_no_other_methods_line(assistant: Any) -> None:
    answer = str(assistant.ask("需要几张A100 80G 全参微调 llama 3 70b").answer_markdown)
    assert "没说训练方法" not in answer and "No method was named" not in answer
