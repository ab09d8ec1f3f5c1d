"""Answer invariants (issue 40 item 6), over the synthetic catalog: each invariant's check fires on an answer that
breaks it, and the answers the engine writes keep it (each was broken before its fix at the source)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from service.assistant.prompts import phrases
from service.catalog.loader import Catalog
from service.checks import invariants
from service.checks.english import english_runs
from service.checks.invariants import check, log_violations
from service.documents.plan_view import read_plan
from service.errors import AdvisorError, UnknownGpuError, UnknownModelError
from service.planner.serving_types import ServingSizing
from service.questions.compose import error_text
from service.questions.plan import PlanAnswer
from service.questions.serving import ServingAnswer
from service.questions.turn import Turn
from tests.spine.conftest import ROOT


def codes(t: Turn, catalog: Catalog) -> list[str]:
    return [v.code for v in check(t.answer, t.text, t.language, catalog)]


@pytest.mark.parametrize(("text", "runs"), [
    # the engine's English in a Chinese serving answer (the example)
    ("起不来：weights need 61.0 GiB per GPU, more than the 43.9 GiB free: torch.OutOfMemoryError。", 1),
    ("无法处理：Unknown model 'internlm'. Did you mean: InternLM-7B?", 1),
    # names, flags, units, strategies, identifiers and paths are not prose
    ("用 vLLM 部署 Qwen2.5-7B（BF16 权重），每卡 14.2 GiB，约 864 tokens/s，首字 562 ms", 0),
    ("| 腾讯云 | GT4.8XLARGE192 | 2 × NVIDIA A100 40GB SXM4 | LoRA r8 + DDP 数据并行 + BF16 |", 0),
    ("京东云 p.n1v100.2xlarge（1 × V100-32G-SXM2）：改法 --max-model-len 16384 --gpu-memory-utilization 0.95", 0),
    ("max_model_len 取 32,768；精度 amp-bf16（LLaMA-Factory 默认，hiyouga/LLaMA-Factory@ff6d4d1）", 0),
    ("文件：train.yaml、data/dataset_info.json、launch.sh", 0),
    ("试跑时看显存峰值、nvidia-smi dmon / dcgmi dmon 和 DataLoader 耗时占比", 0),  # commands, no prose
    ("显存不足报的是 “NPU out of memory”（torch_npu），会提示：“Your GPU does not have native support for FP8”", 0),
    ("会提示：“Your GPU does not have native support for FP8 computation but FP8 quantization will…", 0),  # cut short
    ("- 来源：GM gmasse/gpu-specs:data/specs.json; ADS (cited, not opened)（2026-11-01）", 0),  # sources are names
    # the engine's own message, quoted as code, and links
    ("vLLM 拒绝启动（`To serve at least one request with the models's max seq len (32768)`）", 0),
    ("```bash\nvllm serve Qwen/Qwen2-7B --port 8000\n```\n见 [the guide](https://example.com/a-b-c)", 0),
])
def test_english_runs_are_prose_not_names(text: str, runs: int) -> None:
    assert len(english_runs(text)) == runs


def test_a_chinese_serving_answer_that_does_not_start_says_why_in_chinese(ask: Callable[..., Turn],
                                                                         mini: Catalog) -> None:
    # Regression: "weights need 135.4 GiB per GPU, more than the 21.7 GiB free: ..." in a Chinese answer
    t = ask("用一张A10部署Qwen2-72B")
    assert t.type == "serving" and "起不来" in t.text.splitlines()[0]
    assert "每卡权重需要 135.4 GiB，超过可用的" in t.text and "`torch.OutOfMemoryError: CUDA out of memory`" in t.text
    assert english_runs(t.text) == [] and codes(t, mini) == []


@pytest.mark.parametrize(("error", "said"), [
    (UnknownModelError("internlm", ["InternLM-7B", "InternLM2-7B"]), "不认识的模型「internlm」。你是不是想找：InternLM-7B"),
    (UnknownGpuError("A1000", ["A100-40G-SXM"]), "不认识的GPU「A1000」"),
])
def test_an_error_in_a_chinese_answer_is_said_in_chinese(error: AdvisorError, said: str) -> None:
    # Regression: "Unknown model 'internlm'. Did you mean: ..." and its English fix in a Chinese answer
    text = error_text(error, phrases(ROOT / "prompts", "zh"))
    assert said in text and english_runs(text) == []
    assert "Unknown" in error_text(error, phrases(ROOT / "prompts", "en"))


def test_a_v100_serves_fp16_sized_said_and_launched(ask: Callable[..., Turn], mini: Catalog) -> None:
    # Regression: "Qwen2-7B（BF16 权重）" on a V100, which has no BF16 (vLLM refuses bf16 below 8.0)
    t = ask("V100 部署 Qwen2-7B")
    assert isinstance(t.answer, ServingAnswer)
    assert "（FP16 权重）" in t.text and "BF16 权重" not in t.text and "--dtype float16" in t.text
    assert "不支持 BF16：权重按 FP16 加载" in t.text
    assert codes(t, mini) == []
    broken = t.answer.model_copy(deep=True)
    assert broken.plan is not None
    broken.plan.candidates[0].sizing.weights = "bf16"
    assert [v.code for v in check(broken, t.text, "zh", mini)] == ["dtype"]


def test_a_bf16_card_keeps_bf16(ask: Callable[..., Turn]) -> None:
    t = ask("A10 部署 Qwen2-7B")
    assert "（BF16 权重）" in t.text and "--dtype float16" not in t.text


@pytest.mark.parametrize("question", ["部署Qwen2-7B，每秒20个请求", "serve Qwen2-7B at 20 requests per second",
                                      "部署Qwen2-7B，100并发"])
def test_the_load_share_stated_is_the_engines_check(ask: Callable[..., Turn], mini: Catalog, question: str) -> None:
    # Regression: 4 replicas said to run at "9 % of the load they hold" (sequences in flight over the users a
    # replica holds) where the engine's own check (output tokens/s asked over served) says about 88 %
    t = ask(question)
    assert isinstance(t.answer, ServingAnswer) and t.answer.plan is not None
    s = t.answer.plan.candidates[0].sizing
    share = re.search(r"(\d+)% of the output|输出能力的 (\d+)%", t.text)
    assert share is not None
    assert int(share.group(1) or share.group(2)) == round(100 * s.demand_output_tokens_per_s
                                                          / s.capacity_output_tokens_per_s)
    assert codes(t, mini) == []


def test_a_load_share_that_is_not_the_engines_is_caught() -> None:
    headroom = "4 replicas: each runs 3.2 sequences, 3% of its KV pool (94 at these lengths) and 9% of the load it " \
               "holds within the limits"
    sizing = ServingSizing.model_construct(gpu="A10", weights="bf16", headroom=headroom, headroom_zh="",
                                           demand_output_tokens_per_s=880.0, capacity_output_tokens_per_s=1000.0,
                                           replicas=4)
    found = check(sizing, f"...\n{headroom}\n", "en")
    assert [v.code for v in found] == ["load_figure"] and "engine's check 88%" in found[0].detail


def test_a_price_on_request_says_so_with_the_link(ask: Callable[..., Turn], mini: Catalog) -> None:
    # Regression: "- 改动前：腾讯云 HCCPNV5, 8 × H800-SXM，约 0.5 小时，¥—"
    t = ask("用H800训练Qwen2-7B，10万条，从全参改成LoRA能省多少")
    assert t.type == "savings"
    assert "¥—" not in t.text and "价格需询价：https://buy.cloud.tencent.com/price/cvm/calculator" in t.text
    assert codes(t, mini) == []
    assert [v.code for v in check(None, "- 改动前：放不下，约 — 小时，¥—", "zh")] == ["price_dash"]


def test_a_pick_beaten_by_another_clouds_option_says_why(ask: Callable[..., Turn], mini: Catalog) -> None:
    # Regression: JD Cloud's pick listed under Tencent's, slower and dearer, with no reason given
    t = ask("Qwen2-7B lora微调 10万条数据")
    assert isinstance(t.answer, PlanAnswer)
    why = next(line for line in t.text.splitlines() if "p.n1v100.10xlarge 比腾讯云" in line)
    assert "更慢" in why and "更贵" in why and "京东云上最好的选择" in why
    assert codes(t, mini) == []
    without = "\n".join(line for line in t.text.splitlines() if line != why)
    assert "dominated_pick" in [v.code for v in check(t.answer, without, "zh", mini)]


def _plan_with_a_reason_about_the_cheaper(ask: Callable[..., Turn]) -> dict[str, Any]:
    t = ask("Qwen2-7B lora微调 10万条数据")
    assert isinstance(t.answer, PlanAnswer)
    plan = t.answer.plan.model_dump(mode="json")
    cands = [c for c in plan["candidates"] if c["cloud"] == "tencent"]
    pick, cheaper, faster = cands[0]["instance_type"], cands[1]["instance_type"], cands[2]["instance_type"]
    plan["alternatives"] = {"cheaper": cheaper, "faster": faster}
    plan["pick_reasons"] = {"tencent": {
        "instance_type": pick, "code": "published_price", "message": f"{cheaper} is only ¥3 cheaper.",
        "message_zh": f"{cheaper} 只便宜 ¥3。", "cheapest": cheaper, "fastest": faster, "versus": [cheaper]}}
    return plan


def test_the_document_gives_a_reason_only_under_the_option_it_names(ask: Callable[..., Turn]) -> None:
    # Regression: the request document pasted the reason about the cheaper option under the faster one too
    view = read_plan(_plan_with_a_reason_about_the_cheaper(ask), "zh")
    pick = view.cloud_picks()[0]
    cheaper, faster = view.alternative("cheaper"), view.alternative("faster")
    assert cheaper is not None and faster is not None
    assert view.why_not(pick, cheaper) is not None and view.why_not(pick, faster) is None
    assert view.why_not(pick) is not None  # beside the pick itself


def test_a_document_reason_under_the_wrong_option_is_caught(ask: Callable[..., Turn]) -> None:
    plan = _plan_with_a_reason_about_the_cheaper(ask)
    reason = plan["pick_reasons"]["tencent"]["message_zh"]

    def found(kind: str, option: str) -> list[str]:
        answer = PlanAnswer.model_validate({"plan": plan, "documents": {"request_document": (
            f"- {kind}：**腾讯云 {option}**（1 × A10，10 小时）。推荐方案仍排在它前面：{reason}")}})
        return [v.code for v in check(answer, "", "zh") if v.code == "doc_reason"]

    assert found("更快", plan["alternatives"]["faster"]) == ["doc_reason"]
    assert found("更便宜", plan["alternatives"]["cheaper"]) == []


def test_a_broken_check_never_costs_the_answer(caplog: pytest.LogCaptureFixture,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    assert [v.code for v in log_violations(None, "约 ¥—/月", "zh")] == ["price_dash"]
    assert "answer invariant price_dash broken" in caplog.text

    def broken(*_: object, **__: object) -> list[object]:
        raise RuntimeError("a bug in a check")

    monkeypatch.setattr(invariants, "check", broken)
    assert invariants.log_violations(None, "约 ¥—/月", "zh") == []
    assert "the check failed" in caplog.text
