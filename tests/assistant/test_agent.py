"""The assistant end to end: offline planner model over the real catalog, scripted fake LLM, sessions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from service.assistant.service import Assistant, prose_check
from service.assistant.sessions import SessionNotFoundError
from service.errors import DependencyUnavailableError, InvalidInputError
from service.retrieval.types import Passage
from service.settings import Settings


class FakeRetriever:
    """Returns one fixed passage per language, so citations are deterministic without an index."""

    def search(self, query: str, k: int = 4, lang: str | None = None, cloud: str | None = None) -> list[Passage]:
        lang = lang or "en"
        return [Passage(id=f"guide/03-gpu-specs-precision.{lang}.md#fp8", source="guide/03.md", title="GPU specs",
                        section="FP8", text="FP8 needs compute capability 8.9 (Ada/Hopper); the A10 has none.",
                        score=1.0, dense_rank=1, bm25_rank=1, lang=lang, ref="")]


def _settings(tmp: Path) -> Settings:
    """An injected chat model drives the agent (GPU_ADVISOR_LLM_MODE=agent; the default mode is the LLM reader,
    tests/assistant/test_llm_reader_turns.py)."""
    return Settings(data_dir=tmp, llm="offline", llm_mode="agent")


@pytest.fixture(scope="module")
def assistant(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    return Assistant(_settings(tmp_path_factory.mktemp("agent")), retriever_factory=FakeRetriever)


def _top(r: Any) -> dict[str, Any]:
    assert r.recommendation is not None, r.answer_markdown
    return dict(r.recommendation["candidates"][0])


# (message, expected workload slots, expected language, check on the top candidate or None)
SCENARIOS: list[tuple[str, dict[str, Any], str]] = [
    # the guide's own example
    ("用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000",
     {"model": "Qwen2-7B", "samples": 100000, "budget_cny": 3000, "budget_period": "month"}, "zh"),
    # Chinese numerals and total budget
    ("千问2-7B LoRA微调，一万五千条数据，总预算两万", {"model": "Qwen2-7B", "samples": 15000, "budget_cny": 20000,
                                          "budget_period": "total"}, "zh"),
    # full fine-tune with a deadline
    ("Llama3-8B全参微调，5万条，3天内完成", {"model": "Llama-3-8B", "method": "full", "samples": 50000,
                                    "deadline_hours": 72}, "zh"),
    # QLoRA 4-bit on T4 only
    ("qwen2 7b QLoRA 4bit 微调，只用T4", {"method": "qlora", "quant_bits": 4, "gpu_include": ["T4"]}, "zh"),
    # JD only, monthly billing
    ("只看京东云，包月，Qwen2-7B LoRA，2万条", {"clouds": ["jdcloud"], "billing": "monthly", "samples": 20000}, "zh"),
    # exclude V100, fastest
    ("Baichuan2-13B LoRA，10万条，不要V100，越快越好", {"gpu_exclude": ["V100-32G-SXM2"], "objective": "fastest"}, "zh"),
    # parameter count in Chinese
    ("70亿参数的模型做LoRA微调，3轮，每条约800 token，1万条", {"params_b": 7, "epochs": 3,
                                                  "avg_tokens_per_sample": 800, "samples": 10000}, "zh"),
    # sequence length
    ("ChatGLM3-6B 微调，4k上下文，5000条", {"seq_len": 4096, "samples": 5000}, "zh"),
    # pre-training tokens
    ("Qwen2-1.5B 继续预训练，1亿token", {"method": "pretrain", "tokens": 1e8}, "zh"),
    # spot billing
    ("用竞价实例跑Qwen2-7B LoRA，10万条", {"billing": "spot"}, "zh"),
    # two weeks deadline, half a month
    ("Yi-34B QLoRA，10万条，两周内", {"model": "Yi-34B", "method": "qlora", "deadline_hours": 336}, "zh"),
    # English: the example in English
    ("Fine-tune Qwen2-7B on 100k samples with LoRA, budget ¥3000 per month",
     {"model": "Qwen2-7B", "samples": 100000, "budget_cny": 3000, "budget_period": "month"}, "en"),
    ("Full fine-tune Llama-2-13B on 50k examples within 1 week", {"model": "Llama-2-13B", "method": "full",
                                                                  "deadline_hours": 168}, "en"),
    ("QLoRA 8-bit on Mistral-7B, 20k samples, cheapest option", {"method": "qlora", "quant_bits": 8,
                                                                 "objective": "cheapest"}, "en"),
    ("Pretrain a 1.5B model on 2B tokens", {"params_b": 1.5, "method": "pretrain", "tokens": 2e9}, "en"),
    ("LoRA on Qwen2-72B, 10k samples, total budget ¥50000", {"model": "Qwen2-72B", "budget_cny": 50000,
                                                             "budget_period": "total"}, "en"),
    ("Fine-tune InternLM2-7B with LoRA on Tencent Cloud only, seq 4096", {"clouds": ["tencent"], "seq_len": 4096},
     "en"),
    ("Train Llama3-70B with QLoRA on 5000 samples, 2 epochs", {"model": "Llama-3-70B", "epochs": 2}, "en"),
    ("Fine-tune GLM-4-9B on 30k samples, monthly subscription", {"model": "GLM-4-9B", "billing": "monthly"}, "en"),
    ("Use only A100 for a Qwen2.5-14B LoRA on 40k samples", {"gpu_include": ["A100-40G-SXM"]}, "en"),
    ("DeepSeek-R1-Distill-Qwen-7B LoRA, 500M tokens", {"model": "DeepSeek-R1-Distill-Qwen-7B", "tokens": 5e8},
     "en"),
    ("Fine-tune BERT-base on 100k samples, full fine-tune", {"model": "BERT-base", "method": "full"}, "en"),
    # more Chinese phrasings: 全量, 半个月, 按量, 性价比, 8卡
    ("Qwen2.5-14B 全量微调，2万条，半个月内", {"model": "Qwen2.5-14B", "method": "full", "deadline_hours": 360}, "zh"),
    ("Mistral-7B LoRA，按量计费，性价比优先，3万条", {"billing": "on_demand", "objective": "balanced"}, "zh"),
    ("Qwen2-7B LoRA 微调，8卡，1万条", {"gpu_count": 8}, "zh"),
    ("InternLM2-7B 冻结微调，5000条，2轮", {"method": "freeze", "epochs": 2}, "zh"),
    ("Llama-2-7B QLoRA 8bit，数据500GB", {"method": "qlora", "quant_bits": 8, "dataset_gb": 500}, "zh"),
    ("通义千问2-7B LoRA，1万条，上下文长度8192", {"model": "Qwen2-7B", "seq_len": 8192}, "zh"),
    # more English phrasings
    ("Fine-tune Qwen2-7B, 15k samples, avg 300 tokens per sample, 2 epochs",
     {"samples": 15000, "avg_tokens_per_sample": 300, "epochs": 2}, "en"),
    ("LoRA on Yi-6B with 10k samples, exclude V100, fastest", {"gpu_exclude": ["V100-32G-SXM2"],
                                                               "objective": "fastest"}, "en"),
    ("QLoRA on Qwen2-72B with 20k samples on JD Cloud only", {"clouds": ["jdcloud"], "method": "qlora"}, "en"),
    ("Full fine-tune of ChatGLM3-6B on 8 GPUs with 30k samples", {"gpu_count": 8, "method": "full"}, "en"),
]


@pytest.mark.parametrize(("message", "slots", "lang"), SCENARIOS, ids=[s[0][:30] for s in SCENARIOS])
def test_scenario_reads_workload_and_answers_from_the_engine(assistant: Assistant, message: str,
                                                             slots: dict[str, Any], lang: str) -> None:
    r = assistant.ask(message)
    assert r.language == lang
    assert r.workload is not None, r.answer_markdown
    for key, value in slots.items():
        assert r.workload[key] == value, (key, r.workload[key])
    top = _top(r)
    # every figure in the answer comes from the artifact: the pick, its hours and its cost appear verbatim
    assert top["instance_type"] in r.answer_markdown
    if top.get("price_on_request"):  # an H800/A800 HCC pick has no public price: the answer says so
        assert ("价格需询价" if lang == "zh" else "price on request") in r.answer_markdown
    else:
        assert f"{top['total_cost_cny']:,.0f}" in r.answer_markdown
    assert r.prose_check == []
    assert r.citations, "a workload answer cites the knowledge base"


def test_thirteen_b_full_on_one_a100_80g_is_infeasible_and_says_what_fits(assistant: Assistant) -> None:
    # the popular guide's error: 13B full fine-tune on one A100 80G (16 B/param = 208 GB of model states)
    r = assistant.ask("Llama-2-13B全参微调，只用一张A100 80G")
    assert r.recommendation is None or not r.recommendation["candidates"]
    assert "LoRA" in r.answer_markdown or "lora" in r.answer_markdown


def test_question_without_workload_answers_from_retrieval_and_catalog(assistant: Assistant) -> None:
    r = assistant.ask("A10支持FP8吗？")
    assert r.workload is None and r.recommendation is None
    assert r.citations and r.citations[0].id.endswith("#fp8")
    assert r.answer_markdown.startswith("不支持。")  # the answer first, from the A10 catalog row: supports_fp8 false
    assert r.intent == "knowledge" and r.fact is not None and r.fact["answer"] == "no"


def test_follow_ups_change_only_what_they_mention(assistant: Assistant) -> None:
    first = assistant.ask("用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000")
    r = assistant.ask("预算改成8000呢", first.session_id)
    assert r.workload is not None
    assert (r.workload["model"], r.workload["samples"], r.workload["budget_cny"]) == ("Qwen2-7B", 100000, 8000)
    r = assistant.ask("换成全参微调", first.session_id)
    assert r.workload is not None and r.workload["method"] == "full" and r.workload["budget_cny"] == 8000
    r = assistant.ask("只看京东云", first.session_id)
    assert r.workload is not None and r.workload["clouds"] == ["jdcloud"]
    assert all(c["cloud"] == "jdcloud" for c in r.recommendation["candidates"])  # type: ignore[index]
    r = assistant.ask("what if I use QLoRA instead?", first.session_id)
    assert r.workload is not None and r.workload["method"] == "qlora" and r.language == "en"


def test_documents_on_request(assistant: Assistant) -> None:
    first = assistant.ask("Fine-tune Qwen2-7B on 100k samples with LoRA, budget ¥3000 per month")
    r = assistant.ask("生成申请说明", first.session_id)
    assert "request_document" in r.documents
    assert "AI训练资源申请说明" in r.documents["request_document"]
    r = assistant.ask("give me the launch script", first.session_id)
    assert "train.yaml" in r.documents.get("launch_bundle", {})


@pytest.mark.parametrize("bad", ["", "   ", "x" * 5000])
def test_bad_messages_get_a_clear_error(assistant: Assistant, bad: str) -> None:
    with pytest.raises(InvalidInputError) as exc:
        assistant.ask(bad)
    assert exc.value.fix


def test_unknown_model_gets_did_you_mean(assistant: Assistant) -> None:
    r = assistant.ask("Fine-tune Qwen5-7B on 10k samples")
    assert "Did you mean" in r.answer_markdown


def test_unknown_session_is_an_error(assistant: Assistant) -> None:
    with pytest.raises(SessionNotFoundError):
        assistant.ask("hello", "no-such-session")


def test_garbage_text_does_not_crash(assistant: Assistant) -> None:
    r = assistant.ask("asdfgh 🙂🙂")
    assert r.recommendation is None and r.answer_markdown


def test_sessions_survive_a_restart(tmp_path: Path) -> None:
    a = Assistant(_settings(tmp_path), retriever_factory=FakeRetriever)
    first = a.ask("用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000")
    b = Assistant(_settings(tmp_path), retriever_factory=FakeRetriever)
    assert b.has_session(first.session_id)
    r = b.ask("预算改成8000呢", first.session_id)
    assert r.workload is not None and r.workload["model"] == "Qwen2-7B" and r.workload["budget_cny"] == 8000
    b.rename_session(first.session_id, "qwen plan")
    assert [s.title for s in b.list_sessions()] == ["qwen plan"]
    b.delete_session(first.session_id)
    assert not b.has_session(first.session_id)


class ScriptedLLM(FakeMessagesListChatModel):
    """A scripted OpenAI-style model: emits a tool call, then prose. bind_tools returns itself."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedLLM:
        return self


def _scripted(final: str) -> ScriptedLLM:
    call = {"name": "plan", "args": {"model": "Qwen2-7B", "samples": 100000, "budget_cny": 3000, "gpu_count": 1},
            "id": "c1", "type": "tool_call"}
    return ScriptedLLM(responses=[AIMessage(content="", tool_calls=[call]), AIMessage(content=final)])


def test_llm_path_keeps_the_tool_artifact_and_flags_invented_figures(tmp_path: Path) -> None:
    llm = _scripted("Rent GT4.4XLARGE96 for ¥99,999 — cheap!")
    a = Assistant(_settings(tmp_path), llm=llm, retriever_factory=FakeRetriever)
    r = a.ask("plan qwen2 7b")
    assert r.backend == "openai"
    assert r.recommendation is not None and r.recommendation["picks"]["tencent"] == "GT4.4XLARGE96"
    assert any("99,999" in f for f in r.prose_check)  # the yuan figure is not in the artifact
    assert llm.i == 0  # both scripted responses consumed exactly once (it cycles back to 0)


def test_llm_path_streams_tool_and_final_events(tmp_path: Path) -> None:
    llm = _scripted("The tool says GT4.4XLARGE96.")
    a = Assistant(_settings(tmp_path), llm=llm, retriever_factory=FakeRetriever)
    events = list(a.stream("plan qwen2 7b"))
    kinds = [e.type for e in events]
    assert "tool" in kinds and kinds[-1] == "final"
    assert any(e.type == "token" and "GT4.4XLARGE96" in e.text for e in events)
    assert events[-1].data["recommendation"]["picks"]["tencent"] == "GT4.4XLARGE96"


class BrokenLLM(ScriptedLLM):
    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        raise TimeoutError("provider timed out")


def test_provider_failure_falls_back_to_offline_and_says_so(tmp_path: Path) -> None:
    a = Assistant(_settings(tmp_path), llm=BrokenLLM(responses=[AIMessage("x")]), retriever_factory=FakeRetriever)
    r = a.ask("用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000")
    assert r.backend.startswith("offline (fallback")
    assert "大模型服务暂不可用，已用离线模型回答" in r.answer_markdown
    assert r.recommendation is not None


def test_offline_stream_yields_tokens_then_final(assistant: Assistant) -> None:
    events: Iterator[Any] = assistant.stream("Fine-tune Qwen2-7B on 100k samples with LoRA")
    got = list(events)
    assert sum(e.type == "token" for e in got) > 3
    assert got[-1].type == "final" and got[-1].data["recommendation"] is not None


def test_prose_check_accepts_artifact_figures_and_rejects_others() -> None:
    art = [{"candidates": [{"instance_type": "GT4.4XLARGE96", "total_cost_cny": 321.4}]}]
    known = {"GT4.4XLARGE96", "PNV4.7XLARGE116"}
    assert prose_check("GT4.4XLARGE96 costs ¥321", art, known) == []
    assert prose_check("PNV4.7XLARGE116 costs 500元", art, known) == ["instance PNV4.7XLARGE116", "yuan 500元"]


def test_unreachable_postgres_is_reported_never_replaced_by_sqlite(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from service.assistant import db

    monkeypatch.setattr(db, "CONNECT_BACKOFF_S", (0.1,))
    monkeypatch.setattr(db, "CONNECT_TIMEOUT_S", 0.5)
    settings = Settings(data_dir=tmp_path, llm="offline", DATABASE_URL="postgresql://nobody:secret@127.0.0.1:1/none")
    with pytest.raises(DependencyUnavailableError) as err:
        Assistant(settings, retriever_factory=FakeRetriever)
    assert "postgresql://nobody@127.0.0.1:1/none cannot be reached" in err.value.message
    assert "secret" not in str(err.value)
    assert not (tmp_path / "sessions.sqlite").exists()  # no silent local fallback


def test_encoder_without_a_method_is_planned_in_full(assistant: Assistant) -> None:
    # LoRA is the default for LLMs only; a BERT fine-tune without a method used to come back as LoRA
    r = assistant.ask("Fine-tune BERT-base on 100k samples")
    assert r.workload is not None and r.workload["method"] == "full"


def test_negative_budget_is_reported_not_used(assistant: Assistant) -> None:
    r = assistant.ask("预算-500，用Qwen2-7B微调")
    assert r.workload is not None and r.workload["budget_cny"] is None
    assert "负数" in r.answer_markdown
