"""The /gpu slash command (and the older /gpu-advisor), the document buttons and the 👍/👎 feedback buttons, against
the loopback Web API stub."""

from __future__ import annotations

import json
from typing import Any

import pytest

from service.slack.blocks import LAUNCH_BUNDLE_ACTION, REQUEST_DOC_ACTION, action_value
from tests.slack.conftest import SlackHarness
from tests.slack.fakes import BUNDLE, REQUEST_DOC, FakeAssistant


def answered(slack: SlackHarness, text: str = "<@UBOT> 用Qwen2-7B做问答微调") -> dict[str, Any]:
    """Mention, and return the answer message as Slack would show it (with its buttons)."""
    slack.event({"type": "app_mention", "channel": "C1", "user": "U1", "ts": "50.1", "text": text})
    stop = slack.stub.to("chat.stopStream")[-1]
    return {"ts": stop["ts"], "thread_ts": "50.1", "blocks": stop["blocks"], "text": slack.stub.streamed()}


def button(message: dict[str, Any], action_id: str) -> dict[str, Any]:
    actions = next(b for b in message["blocks"] if b["type"] == "actions")
    element = next(e for e in actions["elements"] if e["action_id"] == action_id)
    return {"type": "button", "action_id": action_id, "block_id": actions["block_id"], "value": element["value"]}


def feedback(message: dict[str, Any], which: str) -> dict[str, Any]:
    """The click on 👍 ("positive") or 👎 ("negative"): Slack sends the element with the clicked button's value."""
    block = next(b for b in message["blocks"] if b["type"] == "context_actions")
    element = block["elements"][0]
    return {"type": "feedback_buttons", "action_id": element["action_id"], "block_id": block["block_id"],
            "value": element[f"{which}_button"]["value"]}


# -- slash command --------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["/gpu", "/gpu-advisor"])  # the new name, and the old one still works
def test_slash_command_starts_a_thread_with_the_answer(slack: SlackHarness, assistant: FakeAssistant,
                                                       command: str) -> None:
    r = slack.command("用Qwen2-7B做问答微调，预算月均¥3000", command=command)
    assert r.status_code == 200 and r.json()["response_type"] == "ephemeral"  # the answer's first lines, privately
    assert "30.12 GiB" in r.json()["text"] and "新话题" in r.json()["blocks"][-1]["elements"][0]["text"]
    [root] = slack.stub.to("chat.postMessage")  # the question, quoted, starts the thread
    assert "thread_ts" not in root and root["text"] == "<@U1> 问：用Qwen2-7B做问答微调，预算月均¥3000"
    [status] = slack.stub.to("assistant.threads.setStatus")
    [start] = slack.stub.to("chat.startStream")
    assert status["thread_ts"] == start["thread_ts"] == "2000000000.000001"  # answered in the root's thread
    assert start["recipient_user_id"] == "U1" and start["recipient_team_id"] == "T1"
    assert "30.12 GiB" in slack.stub.streamed()
    # a mention in that thread continues the session
    slack.event({"type": "app_mention", "channel": "C1", "user": "U1", "ts": "60.1",
                 "thread_ts": "2000000000.000001", "text": "<@UBOT> 换成包月"})
    [session] = assistant.sessions
    assert assistant.asked == [("用Qwen2-7B做问答微调，预算月均¥3000", None), ("换成包月", session)]  # asked once


def test_empty_slash_command_shows_the_usage_privately(slack: SlackHarness, assistant: FakeAssistant) -> None:
    r = slack.command("   ")
    assert r.status_code == 200 and "/gpu " in r.text
    assert slack.stub.methods() == [] and assistant.asked == []


def test_slash_command_where_the_bot_cannot_post_answers_privately(slack: SlackHarness) -> None:
    slack.stub.reject(lambda c: "not_in_channel" if c.method == "chat.postMessage" else None)
    slack.command("Qwen2-7B LoRA", channel="C404")
    [reply] = slack.stub.to("response/1")
    assert reply["response_type"] == "ephemeral" and "30.12 GiB" in reply["text"]
    assert any(b["type"] == "actions" for b in reply["blocks"])
    assert reply["blocks"][-1]["type"] == "context_actions"  # feedback buttons there too


# -- feedback buttons -----------------------------------------------------------------------------------
def test_feedback_is_stored_on_its_turn_and_thanked_privately(slack: SlackHarness, assistant: FakeAssistant) -> None:
    message = answered(slack)
    [session] = assistant.sessions
    assert slack.click(feedback(message, "positive"), message, user="U7").status_code == 200
    assert assistant.ratings == [(session, 1, "up", "U7", "slack")]
    [thanks] = slack.stub.to("chat.postEphemeral")
    assert thanks["user"] == "U7" and thanks["channel"] == "C1" and thanks["text"] == "谢谢反馈！"
    # a follow-up is turn 2: its buttons rate that turn
    slack.event({"type": "app_mention", "channel": "C1", "user": "U1", "ts": "50.2", "thread_ts": "50.1",
                 "text": "<@UBOT> 预算改成¥2000"})
    second = {**message, "blocks": slack.stub.to("chat.stopStream")[-1]["blocks"]}
    slack.click(feedback(second, "negative"), second, user="U7")
    assert assistant.ratings[-1] == (session, 2, "down", "U7", "slack")


def test_feedback_that_is_not_ours_is_ignored(slack: SlackHarness, assistant: FakeAssistant) -> None:
    message = answered(slack)
    action = {**feedback(message, "positive"), "value": "good-feedback"}
    assert slack.click(action, message).status_code == 200
    assert assistant.ratings == [] and slack.stub.to("chat.postEphemeral") == []


def test_feedback_on_a_deleted_session_is_dropped_quietly(slack: SlackHarness, assistant: FakeAssistant) -> None:
    message = answered(slack)
    assistant.sessions.clear()
    slack.click(feedback(message, "negative"), message)
    assert assistant.ratings == [] and slack.stub.to("chat.postEphemeral") == []


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


def test_launch_bundle_button_uploads_one_zip(slack: SlackHarness) -> None:
    # Regression: the bundle was uploaded as loose files (six for a real plan), each its own upload
    import io
    import zipfile

    message = answered(slack, "<@UBOT> LoRA fine-tune Qwen2-7B")
    slack.click(button(message, LAUNCH_BUNDLE_ACTION), message)
    [url] = slack.stub.to("files.getUploadURLExternal")
    assert url["filename"] == "launch-bundle.zip"
    [upload] = [c for c in slack.stub.calls if c.method.startswith("upload/")]
    with zipfile.ZipFile(io.BytesIO(upload.raw)) as zf:
        assert sorted(zf.namelist()) == sorted(BUNDLE)  # nested paths kept (data/dataset_info.json)
        assert zf.read("launch.sh").decode() == BUNDLE["launch.sh"]
        assert zf.getinfo("launch.sh").external_attr >> 16 == 0o755  # executable once unzipped
    [complete] = slack.stub.to("files.completeUploadExternal")
    assert len(complete["files"]) == 1 and complete["initial_comment"] == "Launch bundle"


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
