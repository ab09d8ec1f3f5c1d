"""Issue 41 F1 through the chat: with the LLM reader on, a message's text can reach the workload. A model name that is
not a plausible model id gets the plan answered and the launch bundle refused with a clear line, in the user's
language; nothing of the name runs and no bundle is stored or returned."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from service.assistant.service import build_assistant
from tests.api.conftest import make_settings
from tests.assistant.openai_stub import OpenAIStub
from tests.web.conftest import GuideRetriever

MARK = Path("/tmp/gpu-advisor-pwned-chat")
NAME = f"x$(touch {MARK})-7B"


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    server = OpenAIStub().start()
    yield server
    server.stop()


@pytest.mark.parametrize("lang, message, refused", [
    ("zh", f"用{NAME}做LoRA微调，数据10万条，给我生成启动脚本", "> 文档未生成：模型名 "),
    ("en", f"LoRA fine-tune {NAME} on 100k samples and write the launch bundle", "> No document was written: model: "),
])
def test_the_plan_is_answered_and_the_bundle_refused(stub: OpenAIStub, tmp_path: Path, lang: str, message: str,
                                                      refused: str) -> None:
    MARK.unlink(missing_ok=True)
    frame = {"task": "train", "asked": "plan", "documents": ["launch_bundle"],
             "setups": [{"models": [{"name": NAME}], "method": "lora"}]}
    stub.script(frame, frame)
    settings = make_settings(tmp_path, llm="openai", llm_model="stub-model", llm_base_url=stub.url,
                             llm_structured="function_calling", llm_timeout_s=5.0)
    r = build_assistant(settings, retriever_factory=lambda: GuideRetriever(settings.knowledge_dir)).ask(message)
    assert r.backend == "openai" and r.intent == "plan" and r.slots["model"] == NAME
    assert r.recommendation and r.recommendation["candidates"]  # the plan is served
    assert "launch_bundle" not in r.documents and refused in r.answer_markdown
    assert not MARK.exists()
