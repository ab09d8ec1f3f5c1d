"""A serving answer's Block Kit card (issue 21): the count first, the engine's figures, the pick per cloud with
¥/month and ¥ per million output tokens, the launch command; valid blocks within Slack's limits, in the answer's
language; streamed in a thread with the rent options and the command left to the card. The card is built from the
engine's own plan (the chat's serving answer), not from figures written here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from service.assistant.types import AskResult
from service.catalog.loader import Catalog
from service.planner.serving_inference import inference
from service.planner.serving_plan import plan_serving
from service.questions.serving import ServingAnswer
from service.serving_workload import ServingWorkload
from service.slack.blocks import answer_blocks, card_blocks
from service.slack.mrkdwn import bold
from service.slack.serving_blocks import without_card_sections
from tests.slack.conftest import build_harness
from tests.slack.fakes import SERVING_ZH, FakeAssistant
from tests.slack.stub import SlackStub
from tests.slack.test_blocks import types, validate
from tests.slack.test_events import answer_card, mention


@pytest.fixture(scope="module")
def served(catalog: Catalog) -> ServingAnswer:
    """Qwen2.5-14B at 20 concurrent requests: both clouds serve it (JD on V100s, where SGLang cannot run)."""
    w = ServingWorkload(model="Qwen2.5-14B", concurrency=20)
    out = ServingAnswer(workload=w, plan=plan_serving(w, catalog))
    assert out.plan is not None and set(out.plan.picks) == {"tencent", "jdcloud"}
    return out


@pytest.fixture(scope="module")
def plan_card(served: ServingAnswer) -> dict[str, Any]:
    """The plan the card draws, as JSON (what the assertions read)."""
    assert served.plan is not None
    return {"plan": served.plan.model_dump(mode="json")}


def serving(answer_: ServingAnswer, lang: str = "zh", answer: str = SERVING_ZH) -> AskResult:
    return AskResult(session_id="s1", answer_markdown=answer, language=lang, intent="serving", answer=answer_,
                     backend="fake")


def test_the_serving_card_opens_with_the_count_then_the_picks_and_the_command(served: ServingAnswer,
                                                                             plan_card: dict[str, Any]) -> None:
    blocks = answer_blocks(serving(served))
    validate(blocks)
    top = plan_card["plan"]["candidates"][0]
    s = top["sizing"]
    assert types(blocks)[:5] == ["header", "section", "context", "section", "section"]
    assert blocks[0]["text"]["text"] == "推理部署方案: Qwen2.5-14B"
    count = blocks[1]["text"]["text"]
    assert count.startswith(bold(f"共 {s['total_gpus']} 张 {s['gpu_name']}") + f"：每个副本 {s['gpus_per_replica']} "
                            f"张 × {s['replicas']} 个副本")
    figures = " ".join(e["text"] for e in blocks[2]["elements"])
    assert f"KV 容量 {s['kv_capacity_tokens']:,} tokens" in figures and "首字" in figures and "毫秒" in figures
    picks = [f["text"] for f in blocks[3]["fields"]]
    by_type = {c["instance_type"]: c for c in plan_card["plan"]["candidates"]}
    for text, (cloud, itype) in zip(picks, plan_card["plan"]["picks"].items(), strict=True):
        c = by_type[itype]
        assert {"tencent": "腾讯云", "jdcloud": "京东云"}[cloud] in text and itype in text
        assert f"¥{c['cost_per_month_cny']:,.0f}/月" in text
        assert f"每百万输出 token ¥{c['cny_per_million_output_tokens']:,.2f}" in text
    launch = blocks[4]["text"]["text"]
    assert launch.startswith(bold("启动命令（vLLM，每个副本）")) and top["launch"]["vllm"] in launch
    assert "actions" not in types(blocks)  # the training documents do not apply to a serving plan
    # the answer text below the card: the figures' prose, not the rent options or the command again
    text = " ".join(b["text"]["text"] for b in blocks[5:] if b["type"] == "section")
    assert "需要" in text and "vllm serve" not in text and "租用方案" not in text


def test_english_serving_card(served: ServingAnswer) -> None:
    blocks = answer_blocks(serving(served, "en", "You need **2x L20**.\n\n### Launch command\n```\nvllm\n```"))
    validate(blocks)
    assert blocks[0]["text"]["text"] == "Serving plan: Qwen2.5-14B" and " in all" in blocks[1]["text"]["text"]
    assert "per million output tokens" in blocks[3]["fields"][0]["text"]
    assert "/month" in blocks[3]["fields"][0]["text"] and "Tencent Cloud" in blocks[3]["fields"][0]["text"]


def test_pinned_gpus_that_do_not_start_say_so_first(catalog: Catalog) -> None:
    # 72B in bf16 on one RTX 4090: a GPU no cloud here rents, so the card has the engine's figures and no picks
    w = ServingWorkload(model="Qwen2.5-72B", gpu="RTX 4090", gpus=1)
    answer = ServingAnswer(workload=w, inference=inference(w, catalog))
    inf = answer.inference.model_dump(mode="json") if answer.inference is not None else {}
    assert inf["starts"] is False
    for lang, head, why in (("zh", "1 张 NVIDIA GeForce RTX 4090 24GB 起不来", "每卡权重 135.4 GiB，加载时显存不足"),
                            ("en", "1x NVIDIA GeForce RTX 4090 24GB does not start", inf["starts_reason"])):
        blocks = card_blocks(serving(answer, lang), extra=[])
        validate(blocks)
        first = blocks[0]["text"]["text"]
        assert first.startswith("❌ " + bold(head)) and why in first
        assert "fields" not in json.dumps(blocks)  # nothing to rent


def test_without_card_sections_keeps_the_rest() -> None:
    text = without_card_sections(SERVING_ZH)
    assert text.startswith("需要 **2 张") and "### 估算假设" in text
    assert "### 启动命令" not in text and "vllm serve" not in text and "### 租用方案" not in text


def test_a_serving_answer_streams_and_ends_with_its_card(tmp_path: Path, stub: SlackStub,
                                                         served: ServingAnswer) -> None:
    harness = build_harness(tmp_path, stub, FakeAssistant(serving=served))
    assert harness.event(mention("<@UBOT> 上线Qwen2.5-14B对话服务要几张卡，并发20")).status_code == 200
    streamed = stub.streamed()
    assert "需要 **2 张" in streamed and "估算假设" in streamed
    assert "vllm serve" not in streamed and "租用方案" not in streamed  # the card shows them
    blocks = answer_card(stub)
    validate(blocks[:-1])  # the last is the feedback block (context_actions), checked in test_events
    assert [b["type"] for b in blocks][:4] == ["section", "context", "section", "section"]
    assert blocks[0]["text"]["text"].startswith(bold("共 ")[:-2]) and "vllm serve" in blocks[3]["text"]["text"]
    assert blocks[-1]["type"] == "context_actions"
