"""The LLM reader end to end (service/assistant/service.py with GPU_ADVISOR_LLM=openai): a real ChatOpenAI against
a scripted OpenAI-compatible endpoint on 127.0.0.1 (tests/assistant/openai_stub.py). The frame it returns is the
reading when it is valid; every way the provider fails (prose, invalid JSON, an enum off the schema, a timeout, an
HTTP error, connection refused, no model configured) leaves the message to the offline reader, and the answer
says so in its language."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.assistant.service import Assistant, build_assistant
from service.catalog.loader import Catalog
from tests.api.conftest import make_settings
from tests.assistant.openai_stub import OpenAIStub, Reply
from tests.web.conftest import GuideRetriever

NOTE_EN = "the offline reader read this message"
NOTE_ZH = "大模型解析暂不可用，已用离线解析"
# the offline reader reads this as a comparison of two GPUs; the scripted frame as "does it fit on the H800"
MESSAGE = "A100和H800哪个划算，训练Qwen2-7B lora"
FITS_ON_H800 = {"task": "train", "asked": "fits",
                "setups": [{"models": [{"name": "Qwen2-7B"}], "method": "lora", "hardware": {"gpu": "H800"}}]}


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    server = OpenAIStub().start()
    yield server
    server.stop()


def _assistant(tmp: Path, catalog: Catalog, **overrides: Any) -> Assistant:
    settings = make_settings(tmp, **{"llm": "openai", "llm_model": "stub-model", "llm_timeout_s": 1.0,
                                     **overrides})
    return build_assistant(settings, catalog=catalog, retriever_factory=lambda: GuideRetriever(settings.knowledge_dir))


@pytest.fixture(scope="module")
def tools_assistant(stub: OpenAIStub, catalog: Catalog, tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    """Sends the schema as a forced tool call (DeepSeek, DashScope, Hunyuan)."""
    return _assistant(tmp_path_factory.mktemp("tools"), catalog, llm_base_url=stub.url,
                      llm_structured="function_calling")


@pytest.fixture(scope="module")
def schema_assistant(stub: OpenAIStub, catalog: Catalog, tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    """Sends the schema as a JSON-schema response_format (vLLM, Ollama)."""
    return _assistant(tmp_path_factory.mktemp("schema"), catalog, llm_base_url=stub.url,
                      llm_structured="json_schema")


def test_the_offline_reader_reads_the_message_otherwise(catalog: Catalog, tmp_path: Path) -> None:
    """The premise of the next tests: offline, MESSAGE is a comparison."""
    offline = build_assistant(make_settings(tmp_path), catalog=catalog,
                              retriever_factory=lambda: GuideRetriever(make_settings(tmp_path).knowledge_dir))
    r = offline.ask(MESSAGE)
    assert r.intent == "compare" and r.backend == "offline" and NOTE_EN not in r.answer_markdown


@pytest.mark.parametrize("which", ["tools_assistant", "schema_assistant"])
def test_a_valid_frame_is_the_reading(which: str, stub: OpenAIStub, request: pytest.FixtureRequest) -> None:
    assistant: Assistant = request.getfixturevalue(which)
    stub.script(FITS_ON_H800)
    r = assistant.ask(MESSAGE)
    assert r.backend == "openai" and r.intent == "feasibility"
    assert r.slots["gpu"] == "H800-SXM" and r.slots["model"] == "Qwen2-7B"
    assert NOTE_ZH not in r.answer_markdown and NOTE_EN not in r.answer_markdown
    sent = stub.requests[0]
    if which == "tools_assistant":
        assert sent["tools"][0]["function"]["name"] == "FrameDraft"
    else:
        assert sent["response_format"]["type"] == "json_schema"
    assert sent["messages"][0]["role"] == "system" and "question frame" in sent["messages"][0]["content"]
    assert MESSAGE in sent["messages"][-1]["content"]


def test_the_earlier_user_messages_go_with_a_follow_up(tools_assistant: Assistant, stub: OpenAIStub) -> None:
    stub.script(FITS_ON_H800, {**FITS_ON_H800, "setups": [{**FITS_ON_H800["setups"][0],  # type: ignore[dict-item]
                                                           "hardware": {"gpu": "H800", "gpu_count": 2}}]})
    first = tools_assistant.ask(MESSAGE)
    second = tools_assistant.ask("那两张呢", first.session_id)
    assert second.backend == "openai" and second.slots["gpu_count"] == 2
    assert MESSAGE in stub.requests[1]["messages"][-1]["content"]


def test_an_invented_figure_is_dropped_from_the_answer(tools_assistant: Assistant, stub: OpenAIStub) -> None:
    stub.script({**FITS_ON_H800, "constraints": {"budget_cny": 4321}})
    r = tools_assistant.ask(MESSAGE)
    assert r.backend == "openai" and "budget_cny" not in r.slots
    assert "budget_cny = 4321" in r.answer_markdown  # flagged where the user reads it


# (the provider's reply, the assistant that sends the schema its way, words of the reason)
FAILURES: list[tuple[Reply, str, str]] = [
    (Reply(content="{\"task\": \"train\", \"asked\": "), "schema_assistant", "off-schema"),  # invalid JSON
    (Reply(content="用 2 张 A100 即可。"), "tools_assistant", "off-schema"),  # prose, no tool call
    (Reply(frame={"task": "train", "asked": "maybe"}), "tools_assistant", "asked"),  # off the enum
    (Reply(frame=FITS_ON_H800, delay_s=3.0), "tools_assistant", "Timeout"),  # slower than llm_timeout_s
    (Reply(status=500), "tools_assistant", "Error"),  # the provider's HTTP error
]


@pytest.mark.parametrize(("reply", "which", "why"), FAILURES)
def test_a_provider_failure_reads_offline_and_says_so(reply: Reply, which: str, why: str, stub: OpenAIStub,
                                                       request: pytest.FixtureRequest) -> None:
    assistant: Assistant = request.getfixturevalue(which)
    stub.script(reply, reply)  # the client's one retry gets the same
    r = assistant.ask(MESSAGE)
    assert r.backend.startswith("offline (fallback") and why in r.backend
    assert r.intent == "compare"  # the offline reader's reading
    assert r.answer_markdown.startswith("> 注") and NOTE_ZH in r.answer_markdown.splitlines()[0]


def test_connection_refused_reads_offline_and_says_so_in_english(catalog: Catalog, tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assistant = _assistant(tmp_path, catalog, llm_base_url=f"http://127.0.0.1:{port}/v1")
    r = assistant.ask("Which is cheaper for Qwen2-7B LoRA training, A100 or H800?")
    assert r.backend.startswith("offline (fallback") and "Connection" in r.backend
    assert r.language == "en" and NOTE_EN in r.answer_markdown.splitlines()[0]


def test_no_model_configured_reads_offline_and_says_so(catalog: Catalog, tmp_path: Path) -> None:
    assistant = _assistant(tmp_path, catalog, llm_model="")
    r = assistant.ask(MESSAGE)
    assert r.backend.startswith("offline (fallback") and "GPU_ADVISOR_LLM_MODEL" in r.backend
    assert r.intent == "compare" and NOTE_ZH in r.answer_markdown


def test_the_default_backend_never_calls_the_provider(stub: OpenAIStub, catalog: Catalog, tmp_path: Path) -> None:
    settings = make_settings(tmp_path, llm_base_url=stub.url, llm_model="stub-model")  # llm stays offline
    stub.script(FITS_ON_H800)
    r = build_assistant(settings, catalog=catalog,
                        retriever_factory=lambda: GuideRetriever(settings.knowledge_dir)).ask(MESSAGE)
    assert r.backend == "offline" and r.intent == "compare" and stub.requests == []
