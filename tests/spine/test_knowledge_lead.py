"""The first line of a knowledge answer answers the question (issue 36): the passage about the frame's topic is
chosen, a Mermaid, table or code fragment is never the first line, and a passage written answer-first gives the
yes or no (its typed `answer`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from service.assistant.prompts import phrases
from service.catalog.loader import Catalog
from service.frame import Constraints, Frame, Knobs, Setup
from service.questions import knowledge
from service.questions.base import Ask, Context
from service.questions.knowledge_lead import engine_sentence, lead, order, topic_terms
from service.questions.parts import PassageRef
from service.retrieval.passages import is_prose, overlap, verdict_of
from service.retrieval.types import Passage

ROOT = Path(__file__).resolve().parents[2]
MERMAID = "K -- M\n    L -- M\n    M --|V100、T4| N[\"FP16 + loss scaling\"]"
SPOT = "Yes, if the job saves checkpoints: a spot instance can be reclaimed in the middle of a run."
BIG = "Full fine-tuning a 70B model needs about 1.1–1.2 TB of model states."


def _p(pid: str, section: str, body: str, lang: str = "en") -> Passage:
    return Passage(id=pid, source=f"guide/{pid}.md", title="Guide", section=section, text=f"Guide — {section}\n{body}",
                   score=1.0, dense_rank=None, bm25_rank=1, lang=lang, ref="")


class _Searcher:
    def __init__(self, found: list[Passage]) -> None:
        self.found = found
        self.queries: list[str] = []

    def search(self, query: str, k: int = 5, lang: str | None = None, cloud: str | None = None) -> list[Any]:
        self.queries.append(query)
        return self.found[:k]


@pytest.mark.parametrize(("sentence", "prose"), [
    ("K -- M L -- M M --|V100、T4| N[\"FP16 + loss scaling\"]", False),  # a Mermaid diagram
    ("| Guide's claim | Correction | Source |", False),  # a table row
    ("```bash vllm serve```", False),
    ("", False),
    ("12 / 34 / 56 / 78 / 90", False),  # numbers, no words
    (SPOT, True),
    ("按量，除非每月开机超过约 288 小时。", True),
])
def test_a_diagram_table_or_code_fragment_is_no_first_line(sentence: str, prose: bool) -> None:
    assert is_prose(sentence) is prose


@pytest.mark.parametrize(("sentence", "verdict"), [
    ("Yes, if the job checkpoints.", "yes"), ("No: FlashAttention-2 needs Ampere.", "no"),
    ("Not on a V100.", None), ("Nothing here.", None), ("Yesterday it ran.", None),
    ("是：QLoRA 只在训练时量化。", "yes"), ("可以，但要存检查点。", "yes"), ("需要，PNV4 要加白名单。", "yes"),
    ("有：--context-length。", "yes"), ("有些卡不行。", None), ("不是：DPO 只多一份权重。", "no"), ("不能：V100 不支持。", "no"), ("不需要，直接买。", "no"),
    ("不同的卡差别很大。", None), ("按量，除非每月超过 288 小时。", None),
])
def test_the_verdict_is_the_word_the_sentence_opens_with(sentence: str, verdict: str | None) -> None:
    assert verdict_of(sentence) == verdict


def test_the_frame_names_the_topic() -> None:
    assert topic_terms(Frame(fact="spot")) == ("spot", "竞价")
    assert "按量" in topic_terms(Frame(fact="break_even"))
    assert topic_terms(Frame(constraints=Constraints(billing="spot"))) == ("spot", "竞价")
    assert topic_terms(Frame()) == ()
    v100_flash = Frame(setups=(Setup(knobs=Knobs(attention="flash", strategy="zero"), objective="dpo", method="qlora"),))
    assert topic_terms(v100_flash) == ("FlashAttention", "ZeRO", "DPO", "QLoRA")
    assert topic_terms(Frame(setups=(Setup(method="lora", objective="sft"),))) == ()  # nothing to single out


def test_the_passage_about_the_topic_comes_first_and_a_diagram_is_skipped() -> None:
    refs = [PassageRef.model_validate({**p.to_dict(), "title": f"{p.title} — {p.section}"}) for p in
            (_p("big", "Large models", BIG), _p("flow", "Flowchart", MERMAID), _p("spot", "Spot instances", SPOT))]
    ordered = order(refs, ("spot",))
    assert [p.id for p in ordered] == ["spot", "big", "flow"]
    assert [p.id for p in order(refs, ())] == ["big", "flow", "spot"]  # no topic: the search's order
    found = lead([refs[1], refs[0]])
    assert found is not None and found[1].id == "big"  # the Mermaid passage is passed over


def _answer(mini: Catalog, frame: Frame, found: list[Passage], lang: str = "en") -> tuple[str, Any, _Searcher]:
    searcher = _Searcher(found)
    ctx = Context.of(mini, max_price_age_days=100_000, retriever=lambda: searcher)
    args = knowledge.MODULE.route(Ask(frame=frame, lang=lang))
    out = knowledge.MODULE.run(ctx, args)
    return knowledge.MODULE.render(out, phrases(ROOT / "prompts", lang)), out, searcher


def test_a_spot_question_opens_with_the_spot_passage_and_its_yes(mini: Catalog) -> None:
    frame = Frame(task="train", asked="howto", fact="spot", query="Is it safe to use spot instances for training?")
    text, out, searcher = _answer(mini, frame, [_p("flow", "Flowchart", MERMAID), _p("big", "Large models", BIG),
                                                _p("spot", "Spot instances", SPOT)])
    assert text.splitlines()[0] == SPOT
    assert out.answer == "yes" and out.passages[0].id == "spot"
    assert "spot" in searcher.queries[0]  # the topic's words weigh in the search


def test_without_a_topic_the_first_prose_passage_leads_and_no_verdict_is_made_up(mini: Catalog) -> None:
    frame = Frame(task="none", asked="howto", query="包月和按量怎么选")
    zh = "按量，除非每月开机超过约 288 小时。"
    text, out, _ = _answer(mini, frame, [_p("flow", "流程图", MERMAID, "zh"), _p("bill", "包月与按量", zh, "zh")], "zh")
    assert text.splitlines()[0] == zh
    assert out.answer is None  # the choice is the first word, not a yes/no


def test_only_fragments_found_still_cites_them(mini: Catalog) -> None:
    frame = Frame(task="none", asked="howto", query="flowchart")
    text, out, _ = _answer(mini, frame, [_p("flow", "Flowchart", MERMAID)])
    assert out.lead is None and out.answer is None
    assert "-->" not in text.splitlines()[0] and "(/knowledge/flow)" in text
    assert text.splitlines()[0] == "The guide has no sentence that answers this directly; the closest passages:"


DPO = "不是：DPO 多出来的是一个冻结的参考模型，只占权重。"


@pytest.mark.parametrize(("question", "same"), [
    ("DPO要双倍显存指的是什么？SFT全量大约需要16-20倍参数量的显存，那DPO就要32-40倍吗？", True),
    ("在使用DPO训练的时候，ref-model和待训练的model耗费的GPU显存是怎么分配的？是1:1分配的吗", False),
])
def test_a_yes_no_to_another_question_names_that_question(mini: Catalog, question: str, same: bool) -> None:
    frame = Frame(task="train", asked="howto", query=question)
    text, out, _ = _answer(mini, frame, [_p("dpo", "DPO 要双倍显存，是 SFT 的两倍吗？", DPO, "zh")], "zh")
    first = text.splitlines()[0]
    if same:
        assert first == DPO and out.answer == "no" and out.lead_question is None
    else:  # never a confident 'no' to a question not asked: the line says which question it answers
        assert first == f"就“DPO 要双倍显存，是 SFT 的两倍吗？”这个问题：{DPO}" and out.answer is None


@pytest.mark.parametrize(("heading", "question", "near"), [
    ("Is it safe to use spot instances for model training?", "Is it safe to use spot instances for training? My "
     "manager worries", True),
    ("DeepSpeed 从 ZeRO-2 改成 ZeRO-3 可以吗？", "文档用的是--deepspeed deepspeed_zero2，改成deepspeed_zero3没关系的吗？", True),
    ("Can a MoE model keep only its active experts on the GPU?", "how do I pick a batch size?", False),
    ("DeepSpeed 从 ZeRO-2 改成 ZeRO-3 可以吗？", "deepspeed zero3 和 fsdp 训qwen2.5 32b 哪个省显存", False),  # numbers alone
    ("", "anything", False),
])
def test_how_nearly_a_heading_is_the_question(heading: str, question: str, near: bool) -> None:
    assert (overlap(heading, question) >= 0.4) is near


def test_the_passage_headed_as_the_question_leads(mini: Catalog) -> None:
    split = _p("split", "Will vLLM split a bigger model across the GPUs by itself?", "Yes, but only when asked.")
    tp = _p("tp", "Does a larger --tensor-parallel-size help when one GPU's memory is not enough?",
            "Yes, with more than one GPU.")
    q = "Can increasing tensor_parallel_size solve the problem that one card's memory is not enough for the model?"
    text, out, _ = _answer(mini, Frame(task="serve", asked="howto", query=q), [split, tp])
    assert text.splitlines()[0] == "Yes, with more than one GPU." and out.passages[0].id == "tp"
    text, out, _ = _answer(mini, Frame(task="serve", asked="howto", query="how do I pick a batch size"), [split, tp])
    assert out.passages[0].id == "split"  # no heading near the question: the search's first


def test_a_plain_sentence_leads_over_a_yes_no_to_another_question(mini: Catalog) -> None:
    plain = "DPO 训练时参考模型和策略模型放在同一批卡上，各占一份权重。"
    q = "在使用DPO训练的时候，ref-model和待训练的model耗费的GPU显存是怎么分配的？"
    text, out, _ = _answer(mini, Frame(task="train", asked="howto", query=q),
                           [_p("dpo", "DPO 要双倍显存，是 SFT 的两倍吗？", DPO, "zh"), _p("ref", "DPO 的参考模型", plain, "zh")],
                           "zh")
    assert text.splitlines()[0] == plain and out.answer is None and out.passages[0].id == "ref"


def test_a_passage_on_several_engines_leads_with_the_questions_engine() -> None:
    # Regression: 'TensorRT-LLM takes as much memory for KV cache as it can, how do I limit it per instance?' led
    # with the section's first item, SGLang's --mem-fraction-static
    body = ("- SGLang `--mem-fraction-static`: the share of the memory free at start that holds weights and KV cache.\n"
            "- LMDeploy `--cache-max-entry-count`: the share of the memory free after the weights.\n"
            "- TensorRT-LLM `KvCacheConfig(free_gpu_memory_fraction=0.9)`: the share of the memory free after the\n"
            "  weights and runtime buffers.")
    p = PassageRef(id="e", source="guide/15.md", title="Guide — engines", section="SGLang, LMDeploy and TensorRT-LLM", ref="",
                   text=f"Guide — engines\n{body}")
    first = lead([p])
    assert first is not None and first[0].startswith("SGLang")
    said = engine_sentence(p, ("TensorRT-LLM",), first[0])
    assert said.startswith("TensorRT-LLM KvCacheConfig(free_gpu_memory_fraction=0.9)") and said.endswith("buffers.")
    assert engine_sentence(p, ("SGLang",), first[0]) == first[0]  # its own engine first: kept
    assert engine_sentence(p, ("FlashAttention",), first[0]) == first[0]  # no engine asked: kept
