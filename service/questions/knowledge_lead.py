"""The first line of a knowledge answer (issue 36, "the first line answers the question asked"): the passage whose
content is about the frame's topic, then its first sentence that reads as an answer, and the yes/no that sentence
opens with.

    topic_terms(frame) -> tuple[str, ...]    words that name what the question is about (its fact, billing, engine)
    order(passages, terms) -> list            the passages about the topic first, the search's order kept otherwise
    lead(passages) -> (sentence, passage) | None   the first passage with a prose first sentence (no Mermaid, table,
                                                   code), and that sentence
    choose(passages, terms, question) -> Lead      all three: the passages in the order cited, the lead sentence, its
                                                   yes/no, or the question it answers when not nearly this one
"""

from __future__ import annotations

from dataclasses import dataclass

from service.frame import Frame
from service.lexicon.data import lexicon
from service.questions.parts import PassageRef
from service.retrieval.passages import (
    first_sentence,
    is_prose,
    overlap,
    passage_body,
    passage_items,
    verdict_of,
)

SAME_QUESTION = 0.4  # the share of a passage heading's words the question must share for its yes/no to be the answer

# The words a passage about each frame fact carries in its title or text (English and Chinese guides alike)
_FACT_TERMS: dict[str, tuple[str, ...]] = {
    "spot": ("spot", "竞价"),
    "break_even": ("包月", "按量", "monthly", "pay-as-you-go"),
    "billing": ("包月", "按量", "计费", "monthly", "pay-as-you-go", "billing"),
    "rdma": ("RDMA",),
    "nvlink": ("NVLink",),
    "supports_fp8": ("FP8",),
    "supports_bf16": ("BF16",),
    "supports_flash_attn": ("FlashAttention", "Flash"),
    "regions": ("region", "地域", "可用区"),
    "cuda": ("CUDA",),
    "bandwidth": ("bandwidth", "带宽"),
}
_BILLING_TERMS: dict[str, tuple[str, ...]] = {
    "spot": ("spot", "竞价"),
    "monthly": ("包月", "monthly"),
    "on_demand": ("按量", "pay-as-you-go"),
}
_OBJECTIVES = ("dpo", "orpo", "kto", "ppo", "grpo", "simpo")  # training objectives the guide names by their acronym


def _engine_names() -> dict[str, str]:
    """Engines as the answers name them (knowledge/lexicon.yaml)."""
    return lexicon().labels("engines", "en")


def topic_terms(frame: Frame) -> tuple[str, ...]:
    """What the question is about, from the frame alone: the fact asked, the billing, engine, attention, sharding,
    objective (DPO, PPO ...) or QLoRA named."""
    terms: list[str] = []
    if frame.fact is not None:
        terms += _FACT_TERMS.get(frame.fact, ())
    if frame.constraints.billing:
        terms += _BILLING_TERMS.get(frame.constraints.billing, ())
    setup = frame.setup
    knobs = setup.knobs
    engine = _engine_names().get(knobs.engine or "")
    if engine:
        terms.append(engine)
    if knobs.attention == "flash":
        terms.append("FlashAttention")
    if knobs.strategy == "zero" or knobs.zero_stage is not None:
        terms.append("ZeRO")
    if setup.objective in _OBJECTIVES:
        terms.append(setup.objective.upper())
    if setup.method == "qlora":
        terms.append("QLoRA")
    return tuple(dict.fromkeys(terms))


def _about(p: PassageRef, terms: tuple[str, ...]) -> bool:
    head = f"{p.title} {p.section}".lower()
    body = passage_body(p.text, p.title)[:400].lower()
    return any(t.lower() in head or t.lower() in body for t in terms)


def order(passages: list[PassageRef], terms: tuple[str, ...]) -> list[PassageRef]:
    """The passages about the topic first (their search order kept), then the others."""
    if not terms:
        return passages
    on = [p for p in passages if _about(p, terms)]
    return on + [p for p in passages if p not in on]


def _contains(sentence: str, names: list[str]) -> bool:
    low = sentence.lower()
    return any(n.lower() in low for n in names)


def engine_sentence(p: PassageRef, terms: tuple[str, ...], sentence: str) -> str:
    """A passage on several engines whose first sentence names another one than the question's (SGLang's flag for a
    TensorRT-LLM question): its first item about the question's engine leads instead."""
    names = _engine_names().values()
    asked = [t for t in terms if t in names]
    others = [n for n in names if n not in asked]
    if not asked or _contains(sentence, asked) or not _contains(sentence, others):
        return sentence
    for item in passage_items(p.text, p.title):
        line = first_sentence(item, limit=240)
        if _contains(line, asked) and is_prose(line):
            return line
    return sentence


def lead(passages: list[PassageRef]) -> tuple[str, PassageRef] | None:
    """The first passage whose first sentence reads as an answer, and that sentence; None when none does."""
    for p in passages:
        sentence = first_sentence(passage_body(p.text, p.title))
        if is_prose(sentence):
            return sentence, p
    return None


@dataclass(frozen=True)
class Lead:
    passages: list[PassageRef]  # the lead's passage first, then the others in their order
    sentence: str | None = None  # the first line; None when every passage opens with a fragment
    verdict: str | None = None  # 'yes' / 'no' the sentence opens with, when it answers this question
    question: str | None = None  # the passage's heading, when its yes/no answers a question not nearly this one


def choose(passages: list[PassageRef], terms: tuple[str, ...], question: str) -> Lead:
    """The passages about the topic first; the passage headed nearly as the question leads, else the first whose
    first sentence reads as an answer to this question, and its passage goes first. A yes/no from a passage headed
    as another question ('DPO 要双倍显存吗？' for 'ref-model 的显存怎么分配？') is passed over for a plain sentence;
    when only such remain, it leads with no verdict and the answer names the question it answers."""
    ordered = order(passages, terms)
    near = sorted(ordered, key=lambda q: -overlap(q.section, question))
    candidates = [q for q in near[:1] if overlap(q.section, question) >= SAME_QUESTION] + ordered
    fallback: tuple[str, PassageRef] | None = None
    for p in candidates:
        found = lead([p])
        if found is None:
            continue
        sentence = engine_sentence(p, terms, found[0])
        verdict = verdict_of(sentence)
        rest = [p, *[q for q in ordered if q is not p]]
        if verdict is None or overlap(p.section, question) >= SAME_QUESTION:
            return Lead(rest, sentence, verdict)
        fallback = fallback or found
    if fallback is None:
        return Lead(ordered)
    sentence, p = fallback
    return Lead([p, *[q for q in ordered if q is not p]], sentence, None, p.section)
