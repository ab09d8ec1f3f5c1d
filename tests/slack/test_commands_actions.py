"""The /gpu-advisor slash command and the document buttons, against the loopback Web API stub."""

from __future__ import annotations

import json
from typing import Any

from service.slack.blocks import LAUNCH_BUNDLE_ACTION, REQUEST_DOC_ACTION, action_value
from tests.slack.conftest import SlackHarness
from tests.slack.fakes import BUNDLE, REQUEST_DOC, FakeAssistant


def answered(slack: SlackHarness, text: str = "<@UBOT> 用Qwen2-7B做问答微调") -> dict[str, Any]:
    """Mention, and return the answer message as Slack would show it (with its buttons)."""
    slack.event({"type": "app_mention", "channel": "C1", "user": "U1", "ts": "50.1", "text": text})
    update = slack.stub.to("chat.update")[-1]
    return {"ts": update["ts"], "thread_ts": "50.1", "blocks": update["blocks"], "text": update["text"]}


def button(message: dict[str, Any], action_id: str) -> dict[str, Any]:
    actions = next(b for b in message["blocks"] if b["type"] == "actions")
    element = next(e for e in actions["elements"] if e["action_id"] == action_id)
    return {"type": "button", "action_id": action_id, "block_id": actions["block_id"], "value": element["value"]}


# -- slash command --------------------------------------------------------------------------------------
def test_slash_command_starts_a_thread_with_the_answer(slack: SlackHarness, assistant: FakeAssistant) -> None:
    r = slack.command("用Qwen2-7B做问答微调，预算月均¥3000")
    assert r.status_code == 200 and r.text == ""  # acknowledged with nothing to show
    [root] = slack.stub.to("chat.postMessage")
    assert "thread_ts" not in root and root["text"].startswith("🤔 正在计算…")
    [update] = slack.stub.to("chat.update")
    assert update["ts"] == "2000000000.000001"
    assert update["blocks"][0]["type"] == "context" and "<@U1>" in update["blocks"][0]["elements"][0]["text"]
    # the answer message is the thread's root: a mention in its thread continues the session
    slack.event({"type": "app_mention", "channel": "C1", "user": "U1", "ts": "60.1",
                 "thread_ts": "2000000000.000001", "text": "<@UBOT> 换成包月"})
    [session] = assistant.sessions
    assert assistant.asked[1] == ("换成包月", session)


def test_empty_slash_command_shows_the_usage_privately(slack: SlackHarness, assistant: FakeAssistant) -> None:
    r = slack.command("   ")
    assert r.status_code == 200 and "/gpu-advisor" in r.text
    assert slack.stub.methods() == [] and assistant.asked == []


def test_slash_command_where_the_bot_cannot_post_answers_privately(slack: SlackHarness) -> None:
    slack.stub.reject(lambda c: "not_in_channel" if c.method == "chat.postMessage" else None)
    slack.command("Qwen2-7B LoRA", channel="C404")
    [reply] = slack.stub.to("response/1")
    assert reply["response_type"] == "ephemeral" and "30.12 GiB" in reply["text"]
    assert any(b["type"] == "actions" for b in reply["blocks"])


# -- document buttons -------------------------------------------------------------------------------------
def test_request_document_button_uploads_the_markdown_in_the_thread(slack: SlackHarness,
                                                                     assistant: FakeAssistant) -> None:
    message = answered(slack)
    assert slack.click(button(message, REQUEST_DOC_ACTION), message).status_code == 200
    [session] = assistant.sessions
    assert assistant.asked[-1] == ("生成申请说明", session)  # the same assistant entry point, same session
    [url] = slack.stub.to("files.getUploadURLExternal")
    assert url["filename"] == "ai-training-request.zh.md" and int(url["length"]) == len(REQUEST_DOC.encode())
    [upload] = [c for c in slack.stub.calls if c.method.startswith("upload/")]
    assert upload.raw.decode() == REQUEST_DOC
    [complete] = slack.stub.to("files.completeUploadExternal")
    assert complete["channel_id"] == "C1" and complete["thread_ts"] == "50.1"
    assert complete["initial_comment"] == "《AI训练资源申请说明》"


def test_launch_bundle_button_uploads_every_file(slack: SlackHarness) -> None:
    message = answered(slack, "<@UBOT> LoRA fine-tune Qwen2-7B")
    slack.click(button(message, LAUNCH_BUNDLE_ACTION), message)
    names = [u["filename"] for u in slack.stub.to("files.getUploadURLExternal")]
    assert names == ["train.yaml", "data_dataset_info.json", "launch.sh"]
    [complete] = slack.stub.to("files.completeUploadExternal")
    assert [f["title"] for f in complete["files"]] == list(BUNDLE)
    assert complete["initial_comment"] == "Launch bundle"


def test_upload_failure_posts_code_blocks_instead(slack: SlackHarness) -> None:
    message = answered(slack)
    slack.stub.reject(lambda c: "missing_scope" if c.method == "files.getUploadURLExternal" else None)
    slack.click(button(message, LAUNCH_BUNDLE_ACTION), message)
    posted = slack.stub.to("chat.postMessage")[-1]
    assert posted["thread_ts"] == "50.1"
    text = json.dumps(posted["blocks"], ensure_ascii=False)
    assert "llamafactory-cli train train.yaml" in text and "`data/dataset_info.json`" in text


def test_button_of_an_expired_session_says_so(slack: SlackHarness, assistant: FakeAssistant) -> None:
    message = answered(slack)
    assistant.sessions.clear()
    slack.click(button(message, REQUEST_DOC_ACTION), message)
    assert "会话已失效" in slack.stub.to("chat.postMessage")[-1]["text"]
    assert slack.stub.to("files.getUploadURLExternal") == []


def test_button_on_a_private_answer_replies_through_response_url(slack: SlackHarness,
                                                                  assistant: FakeAssistant) -> None:
    sid = assistant.ask("Qwen2-7B LoRA").session_id
    action = {"type": "button", "action_id": REQUEST_DOC_ACTION, "value": action_value(sid, "en")}
    slack.click(action, None, channel="C404")  # an ephemeral message: no `message` in the payload
    [reply] = slack.stub.to("response/2")
    assert reply["response_type"] == "ephemeral" and "AI训练资源申请说明" in json.dumps(reply["blocks"],
                                                                                      ensure_ascii=False)


def test_document_failure_is_reported_in_the_thread(slack: SlackHarness, assistant: FakeAssistant) -> None:
    message = answered(slack)
    assistant.fail_with = RuntimeError("disk full")
    slack.click(button(message, REQUEST_DOC_ACTION), message)
    note = slack.stub.to("chat.postMessage")[-1]
    assert note["thread_ts"] == "50.1" and "文档生成失败" in note["text"]
