"""The clients people already use, against a live uvicorn with the real offline assistant: the official openai
SDK (Chat Completions and Responses, plain and streamed) and LangChain's ChatOpenAI (both APIs).

Each client sends the whole conversation and no session id; the follow-up must keep the conversation.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from service.app import create_app
from service.catalog.loader import Catalog
from tests.api.conftest import make_settings
from tests.api.fakes import FakeRetriever

pytest.importorskip("service.assistant.service")
pytestmark = pytest.mark.integration
QUESTION = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"
FOLLOW_UP = "预算改成8000呢"
OPEN_WEBUI_TITLE = (
    "### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history.\n"
    "### Guidelines:\n- The title should clearly represent the main theme.\n### Output:\n"
    'JSON format: { "title": "your concise title here" }\n### Chat History:\n<chat_history>\n'
    f"USER: {QUESTION}\nASSISTANT: 推荐配置……\n</chat_history>"
)
OPEN_WEBUI_FOLLOW_UPS = (
    "### Task:\nSuggest 3-5 relevant follow-up questions or prompts that the user might naturally ask next.\n"
    '### Output:\nJSON format: { "follow_ups": ["Question 1?", "Question 2?", "Question 3?"] }\n'
    f"### Chat History:\n<chat_history>\nUSER: {QUESTION}\n</chat_history>"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Any:
    import threading

    import uvicorn

    from tests.api.conftest import free_socket, wait_for

    settings = make_settings(Path(tmp_path_factory.mktemp("clients")))
    app = create_app(settings, catalog=catalog, retriever=FakeRetriever())
    sock = free_socket()
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    wait_for(f"{base}/healthz")
    yield base
    srv.should_exit = True
    thread.join(timeout=10)


def budget_line(text: str) -> str:
    found = re.search(r"(预算判断|Budget:)[^\n]*", text)
    assert found, text[:400]
    return found.group(0)


def test_openai_follow_up_as_messages_keeps_the_conversation(server: str) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=f"{server}/v1", api_key="none", max_retries=0)
    history: list[Any] = [{"role": "user", "content": QUESTION}]
    first = client.chat.completions.create(model="gpu-advisor", messages=history).choices[0].message.content or ""
    assert "Qwen2-7B" in first and "¥3,000" in budget_line(first)
    history += [{"role": "assistant", "content": first}, {"role": "user", "content": FOLLOW_UP}]
    second = client.chat.completions.create(model="gpu-advisor", messages=history).choices[0].message.content or ""
    assert "Qwen2-7B" in second and "¥8,000" in budget_line(second), second[:600]
    assert "Which model" not in second and "请告诉我要训练的模型" not in second
    # the same follow-up streamed
    stream = client.chat.completions.create(model="gpu-advisor", messages=history, stream=True)
    streamed = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert "¥8,000" in budget_line(streamed)


@pytest.mark.parametrize("answer_format", ["markdown", "text"])
def test_a_trimmed_history_continues_from_our_answer(server: str, answer_format: str) -> None:
    """A client that drops the oldest user turn still sends our answer: a Markdown client's carries the planned
    workload (an invisible comment); a plain-text client's (the SDK's default: clean text) names its session."""
    from openai import OpenAI

    headers = {"X-Answer-Format": "markdown"} if answer_format == "markdown" else {}
    client = OpenAI(base_url=f"{server}/v1", api_key="none", max_retries=0, default_headers=headers)
    first = client.chat.completions.create(model="gpu-advisor", messages=[{"role": "user", "content": QUESTION}])
    answer = first.choices[0].message.content or ""
    assert ("<!-- gpu-advisor:workload " in answer) == (answer_format == "markdown")
    trimmed = [{"role": "assistant", "content": answer}, {"role": "user", "content": FOLLOW_UP}]
    second = client.chat.completions.create(model="gpu-advisor", messages=trimmed).choices[0].message.content or ""
    assert "Qwen2-7B" in second and "¥8,000" in budget_line(second)


def test_a_system_message_sets_the_language_and_length(server: str) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=f"{server}/v1", api_key="none", max_retries=0)
    english = client.chat.completions.create(model="gpu-advisor", messages=[
        {"role": "system", "content": "Always answer in English."}, {"role": "user", "content": QUESTION}])
    text = english.choices[0].message.content or ""
    assert "Budget:" in text and "预算判断" not in text and "推荐配置" not in text
    chinese = client.chat.completions.create(model="gpu-advisor", messages=[
        {"role": "system", "content": "请用中文回答"},
        {"role": "user", "content": "Fine-tune Qwen2-7B with LoRA on 100k samples, budget 3000 yuan a month"}])
    assert "预算判断" in (chinese.choices[0].message.content or "")
    full = client.chat.completions.create(model="gpu-advisor", messages=[{"role": "user", "content": QUESTION}])
    brief = client.chat.completions.create(model="gpu-advisor", messages=[
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": QUESTION}])
    short, long = brief.choices[0].message.content or "", full.choices[0].message.content or ""
    assert "预算判断" in short and len(short) < len(long) / 2 and "### " not in short


def test_client_background_tasks_are_answered_and_not_stored(server: str) -> None:
    import json

    import httpx
    from openai import OpenAI

    client = OpenAI(base_url=f"{server}/v1", api_key="none", max_retries=0)
    before = len(httpx.get(f"{server}/v1/sessions").json())
    title = client.chat.completions.create(model="gpu-advisor", messages=[{"role": "user", "content": OPEN_WEBUI_TITLE}])
    assert "Qwen2-7B" in json.loads(title.choices[0].message.content or "")["title"]
    ups = client.chat.completions.create(model="gpu-advisor", stream=True,
                                         messages=[{"role": "user", "content": OPEN_WEBUI_FOLLOW_UPS}])
    follow = json.loads("".join(c.choices[0].delta.content or "" for c in ups if c.choices))["follow_ups"]
    assert len(follow) >= 3 and all(re.search(r"[\u4e00-\u9fff]", f) for f in follow)
    assert len(httpx.get(f"{server}/v1/sessions").json()) == before


def test_openai_responses_plain_streamed_and_previous_response(server: str) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=f"{server}/v1", api_key="none", max_retries=0)
    first = client.responses.create(model="gpu-advisor", input=QUESTION)
    assert first.status == "completed" and "¥3,000" in budget_line(first.output_text)
    assert first.usage is not None and first.usage.total_tokens > 0
    second = client.responses.create(model="gpu-advisor", input=FOLLOW_UP, previous_response_id=first.id)
    assert "Qwen2-7B" in second.output_text and "¥8,000" in budget_line(second.output_text)
    events = list(client.responses.create(model="gpu-advisor", input=QUESTION, stream=True,
                                          instructions="Always answer in English."))
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert "Budget:" in deltas and events[-1].response.output_text == deltas
    as_messages = client.responses.create(model="gpu-advisor", input=[
        {"role": "user", "content": QUESTION}, {"role": "assistant", "content": first.output_text},
        {"role": "user", "content": FOLLOW_UP}])
    assert "¥8,000" in budget_line(as_messages.output_text)


@pytest.mark.parametrize("responses_api", [False, True])
def test_langchain_chat_openai(server: str, responses_api: bool) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model="gpu-advisor", base_url=f"{server}/v1", api_key="none", max_retries=0,
                     use_responses_api=responses_api)
    first = llm.invoke([HumanMessage(QUESTION)])
    assert "¥3,000" in budget_line(first.text)
    second = llm.invoke([HumanMessage(QUESTION), AIMessage(first.text), HumanMessage(FOLLOW_UP)])
    assert "Qwen2-7B" in second.text and "¥8,000" in budget_line(second.text)
    streamed = "".join(c.text for c in llm.stream([SystemMessage("Always answer in English."), HumanMessage(QUESTION)]))
    assert "Budget:" in streamed


def test_a_stateless_conversation_is_one_stored_session(server: str) -> None:
    """Our answer names its stored session (invisibly), so a client without session ids still keeps one session per
    conversation; the messages stay the history."""
    import httpx
    from openai import OpenAI

    client = OpenAI(base_url=f"{server}/v1", api_key="none", max_retries=0)
    before = {s["session_id"] for s in httpx.get(f"{server}/v1/sessions").json()}
    history: list[Any] = [{"role": "user", "content": QUESTION}]
    first = client.chat.completions.with_raw_response.create(model="gpu-advisor", messages=history)
    sid = first.headers["x-session-id"]
    history += [{"role": "assistant", "content": first.parse().choices[0].message.content},
                {"role": "user", "content": FOLLOW_UP}]
    second = client.chat.completions.with_raw_response.create(model="gpu-advisor", messages=history)
    assert second.headers["x-session-id"] == sid
    assert "¥8,000" in budget_line(second.parse().choices[0].message.content or "")
    after = {s["session_id"]: s for s in httpx.get(f"{server}/v1/sessions").json()}
    assert set(after) - before == {sid} and after[sid]["turns"] == 2
