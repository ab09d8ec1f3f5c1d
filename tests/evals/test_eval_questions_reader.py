"""`gpu-advisor eval-questions --reader offline|llm`: the flag picks who reads each question, whatever the
environment says, and the report counts who did (llm / offline / fallback). The LLM is a scripted endpoint on
127.0.0.1 (tests/assistant/openai_stub.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from service.cli.app import build_app
from service.evals.questions.readers import reader_settings
from service.evals.questions.run import read_by
from service.settings import Settings, get_settings
from tests.assistant.openai_stub import OpenAIStub, Reply

pytestmark = [pytest.mark.slow]  # the whole corpus

OUT_OF_SCOPE = {"task": "none", "asked": "other"}


@pytest.fixture()
def stub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[OpenAIStub]:
    """A provider configured in the environment, as a deployment with an LLM has it."""
    server = OpenAIStub().start()
    for var, value in (("GPU_ADVISOR_LLM_BASE_URL", server.url), ("GPU_ADVISOR_LLM_MODEL", "stub-model"),
                       ("GPU_ADVISOR_LLM_TIMEOUT_S", "2"), ("GPU_ADVISOR_LLM_STRUCTURED", "function_calling"),
                       ("GPU_ADVISOR_DATA_DIR", str(tmp_path / "data")), ("GPU_ADVISOR_LLM", "openai")):
        monkeypatch.setenv(var, value)
    for var in ("GPU_ADVISOR_KNOWLEDGE_DIR", "GPU_ADVISOR_PRICES_FILE", "GPU_ADVISOR_LLM_MODE"):
        monkeypatch.delenv(var, raising=False)
    get_settings.cache_clear()
    yield server
    server.stop()
    get_settings.cache_clear()


def _run(*args: str) -> dict[str, int]:
    result = CliRunner().invoke(build_app(), ["eval-questions", "--split", "working", "--limit", "3", "--json",
                                              *args])
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout)["splits"]["working"]["read_by"])


def test_offline_is_the_default_even_with_a_provider_configured(stub: OpenAIStub) -> None:
    assert _run() == {"offline": 3} and stub.requests == []


def test_llm_reads_every_question_with_the_provider(stub: OpenAIStub) -> None:
    stub.script(*[OUT_OF_SCOPE] * 20)  # enough for the questions and their earlier turns
    assert _run("--reader", "llm") == {"llm": 3}
    assert stub.requests and stub.requests[0]["tools"][0]["function"]["name"] == "FrameDraft"


def test_llm_that_cannot_read_is_counted_as_fallback(stub: OpenAIStub) -> None:
    stub.script(*[Reply(content="not a frame")] * 40)
    assert _run("--reader", "llm") == {"fallback": 3}


# (the backend an answer names, who read it)
BACKENDS = [
    ("openai", "llm"),
    ("offline", "offline"),
    ("offline (fallback: TimeoutError: timed out)", "fallback"),
]


@pytest.mark.parametrize(("backend", "who"), BACKENDS)
def test_read_by_names_the_reader(backend: str, who: str) -> None:
    assert read_by(backend) == who


def test_reader_settings_switch_the_backend_only() -> None:
    base = Settings(llm="openai", llm_mode="agent", llm_model="m", data_dir=Path("x"))
    assert reader_settings(base, "offline").llm == "offline"
    llm = reader_settings(base, "llm")
    assert (llm.llm, llm.llm_mode, llm.llm_model, llm.data_dir) == ("openai", "reader", "m", Path("x"))
