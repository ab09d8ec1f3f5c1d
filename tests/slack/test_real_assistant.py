"""The bot over the real offline Assistant (planner model, real catalog, SQLite sessions; a fixed retriever)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.assistant.service import Assistant
from service.retrieval.types import Passage
from service.settings import Settings
from service.slack.blocks import REQUEST_DOC_ACTION
from tests.slack.conftest import SlackHarness, build_harness
from tests.slack.stub import SlackStub
from tests.slack.test_commands_actions import button
from tests.slack.test_events import assert_valid_blocks

EXAMPLE = "<@UBOT> 用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"


class FixedRetriever:
    warnings: list[str] = []

    def search(self, query: str, k: int = 4, lang: str | None = None, cloud: str | None = None,
               topic: str | None = None) -> list[Passage]:
        lang = lang or "zh"
        return [Passage(id=f"guide/04-training-memory.{lang}.md#lora", source="guide/04-training-memory.md",
                        title="LoRA memory", section="LoRA", text="LoRA trains adapters only.", score=1.0,
                        dense_rank=1, bm25_rank=1, lang=lang, ref="")]


@pytest.fixture
def real(tmp_path: Path) -> Assistant:
    return Assistant(Settings(data_dir=tmp_path / "assistant", llm="offline"), retriever_factory=FixedRetriever)


@pytest.fixture
def harness(tmp_path: Path, stub: SlackStub, real: Assistant) -> SlackHarness:
    return build_harness(tmp_path, stub, real)


def test_guide_example_end_to_end(harness: SlackHarness, real: Assistant) -> None:
    harness.event({"type": "app_mention", "channel": "C1", "user": "U1", "ts": "70.1", "text": EXAMPLE})
    [stop] = harness.stub.to("chat.stopStream")
    blocks = stop["blocks"]
    assert_valid_blocks(blocks)
    text = harness.stub.streamed()
    # the first line is the configuration itself (each cloud's pick), then the plan's heading
    assert text.startswith("推荐：腾讯云") and "## 推荐配置：Qwen2-7B" in text
    assert "| 云厂商 |" not in text and "参考资料" not in text
    assert "/knowledge/" not in text  # page links are for the web page, not for Slack
    table = next(b for b in blocks if b["type"] == "table")
    instances = [row[1]["text"] for row in table["rows"][1:]]
    # the pick's cost as the engine computes it (not a hard-coded figure: the engine's model is calibrated)
    from service.catalog.loader import load_catalog
    from service.planner.plan import plan
    from service.settings import get_settings
    from service.workload import Workload

    top = plan(Workload(model="Qwen2-7B", samples=100_000, budget_cny=3000), load_catalog(get_settings().knowledge_dir))
    tencent = top.picks()["tencent"]
    # Tencent's and JD's picks, as the engine picks them
    assert instances[0] == f"★ {tencent.inst.instance_type}" and instances[1] == "★ p.n1v100.2xlarge"
    assert f"¥{tencent.total_cny:,.0f}" in str(blocks[0]) and "腾讯云" in str(blocks[0])
    # the pick's list price is on Tencent's ~2021 page (issue 39): the Slack answer says its age beside it
    assert "刊例价来自约 2021 年的价格页，可能已调整，请以官网价格计算器为准" in text

    # a follow-up in the thread continues the same session
    harness.event({"type": "app_mention", "channel": "C1", "user": "U1", "ts": "70.2", "thread_ts": "70.1",
                   "text": "<@UBOT> 只看京东云"})
    [session] = real.list_sessions()
    assert session.turns == 2

    # 👍 on the first answer is stored on turn 1 of the real session store
    feedback = next(b for b in blocks if b["type"] == "context_actions")["elements"][0]
    harness.click({"type": "feedback_buttons", "action_id": feedback["action_id"],
                   "value": feedback["positive_button"]["value"]}, {"ts": stop["ts"], "thread_ts": "70.1"})
    assert real.sessions.feedback_counts() == {"plan": {"up": 1, "down": 0}}

    # the request-document button uploads the real document into the thread
    message = {"ts": stop["ts"], "thread_ts": "70.1", "blocks": blocks}
    harness.click(button(message, REQUEST_DOC_ACTION), message)
    [upload] = [c for c in harness.stub.calls if c.method.startswith("upload/")]
    assert "AI训练资源申请说明" in upload.raw.decode()
    assert harness.stub.to("files.completeUploadExternal")[0]["thread_ts"] == "70.1"


def test_serving_question_end_to_end(harness: SlackHarness, real: Assistant) -> None:
    """A serving question through the real assistant: the streamed text opens with the count, the card repeats it
    first, then the engine's picks with ¥/month and ¥ per million tokens, and the launch command."""
    harness.event({"type": "app_mention", "channel": "C1", "user": "U1", "ts": "71.1",
                   "text": "<@UBOT> 上线Qwen2.5-14B的对话服务要几张卡，并发20"})
    [stop] = harness.stub.to("chat.stopStream")
    blocks = stop["blocks"]
    assert_valid_blocks(blocks)
    text = harness.stub.streamed()
    assert text.startswith("需要 **") and "vllm serve" not in text  # the command is the card's
    [session] = real.list_sessions()
    [turn] = real.sessions.turns(session.session_id)
    serving = (turn.result or {})["serving"]
    assert f"共 {serving['total_gpus']} 张" in blocks[0]["text"]["text"]
    picks = " ".join(f["text"] for f in blocks[2]["fields"])
    assert serving["instance"]["instance_type"] in picks and f"¥{serving['cost_cny_per_month']:,.0f}/月" in picks
    assert f"每百万输出 token ¥{serving['cny_per_million_tokens']:,.2f}" in picks
    assert "vllm serve" in blocks[3]["text"]["text"]
