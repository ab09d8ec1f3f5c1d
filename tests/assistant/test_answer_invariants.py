"""Answer invariants (issue 40 item 6) on the shipped catalog: the questions that broke them (a V100, price-on-request
families, Chinese serving that does not start, stated loads, two clouds' picks), and, in the slow tier, the working
split of evals/questions (never the test split) with them: zero violations.

Measured before the fixes (ab3a196) on 858 answers (the 821 working questions and 37 hand-written ones): 37 Chinese
answers with engine English, 37 with BF16 sized on a card without it, 27 with a pick slower and dearer than one listed
beside it and no reason, 13 with "¥—" or a price on request without its link, 8 with a load share that was not the
engine's; after, none."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from service.checks.invariants import check

# written for these checks (not from the eval split): the answers that broke an invariant before its fix
HAND_WRITTEN = [
    # a V100 or T4 has no BF16: the engine sizes, names and launches FP16
    "V100 部署 qwen2.5-7b 需要几张卡", "serve Qwen2.5-14B on 2 V100", "用2张V100部署qwen2.5-14b，50并发",
    "T4 部署 qwen2.5-3b", "在GN10X上部署llama3-8b 50并发", "V100 部署 qwen2.5-7b fp8", "how many V100 to serve Llama-3.1-70B",
    "用V100训练qwen2.5-7b lora要多久", "8张V100部署DeepSeek-V3",
    # families whose price is on request (HCCPNV5 / H800)
    "H800部署qwen2.5-72b 100并发", "serve Qwen2.5-72B on H800 at 50 concurrent users", "HCCPNV5多少钱",
    "H800一小时多少钱", "用H800训练qwen2.5-72b全参 10万条数据", "HCCPNV5 上 LoRA 微调 qwen2.5-72b 10万条 要多少钱",
    "用8张H800全参微调qwen2.5-72b 10万条，开梯度检查点能省多少钱", "qlora和lora 训qwen2.5 14b 效果差多少 时间差多少",
    "serve qwen2.5-72b on HCCPNV5, how much per month", "用H800部署llama-3.1-70b fp8 要多少钱",
    # Chinese serving that does not start
    "用4张A10部署Qwen2.5-72B", "一张4090部署qwen2.5-32b", "2张L20部署qwen2.5-72b", "一张A10用sglang部署qwen2.5-14b",
    "单卡T4部署qwen2.5-14b 32k上下文", "用2张A10部署Qwen2.5-32B TP6", "ds r1 distill qwen 32b vllm 单卡l20 bf16 起得来吗",
    "用vLLM部署sd3-medium需要几张A10",  # not an LLM: refused, in Chinese
    # stated loads: the share said is the engine's
    "serve Qwen2.5-7B at 30 requests per second on H20", "部署qwen2.5-72b 每秒5个请求",
    "部署Qwen2.5-72B，200并发，首字延迟2秒以内", "serve llama-3.1-70b at 2 req/s, input 2000 output 500",
    # plans listing both clouds' picks
    "用qwen2.5-7b做lora微调，10万条数据，预算5000元", "full fine-tune Qwen2.5-72B on 50k samples, seq 4k, 3 epochs",
    "游戏客服 glm4 9b 微调 数据才5k条 要最便宜的方案",
]


def violations(assistant: Any, turns: list[str]) -> list[str]:
    sid = None
    for text in turns:
        result = assistant.ask(text, sid) if sid else assistant.ask(text)
        sid = result.session_id
    return [f"{v.code}: {v.detail}" for v in check(result.answer, result.answer_markdown, result.language,
                                                   assistant.catalog)]


@pytest.mark.parametrize("question", HAND_WRITTEN)
def test_the_questions_that_broke_an_invariant_keep_them(assistant: Any, question: str) -> None:
    assert violations(assistant, [question]) == []


def test_a_request_document_asked_for_after_a_plan_keeps_them(assistant: Any) -> None:
    assert violations(assistant, ["用qwen2.5-7b做lora微调，10万条数据，预算5000元", "生成申请说明"]) == []


@pytest.mark.slow
def test_the_working_split_breaks_no_invariant(assistant: Any) -> None:
    from service.evals.questions.dataset import load_split

    found: Counter[str] = Counter()
    examples: list[str] = []
    for q in load_split("working"):
        for v in violations(assistant, [*q.turns, q.text]):
            found[v.split(":")[0]] += 1
            examples.append(f"{q.id}: {v}")
    assert not found, (dict(found), examples[:10])
