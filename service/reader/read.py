"""The reader's entry point: a message (with the conversation's earlier user turns) -> a Reading: the slots the
words state, the question frame (service/frame.py), the question type derived from it, and how sure it is.

    sure          the top type's probability >= SURE and it leads the next by >= MARGIN: answer it;
    unsure        otherwise: answer the likelier reading and say in one line what else it could mean;
    out of scope  the top type is out_of_scope: say what the product answers, no plan, no figures.

The slot finders (service/reader/message.py and friends) return values and never decide the type; the learned
parts (service/reader/learned.py: task and asked, from the text itself, the slots and the previous turn) give the
frame, and the question spine's table (passed in as `table`) turns the frame into the type.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from threading import Lock
from typing import Any, Literal, Protocol

from service.frame import Frame
from service.reader.frame_build import CatalogNames, build_frame, settle
from service.reader.frame_reader import (
    Decide,
    conversation_slots,
    message_features,
    type_scores,
    unknowns_for,
)
from service.reader.learned import FrameModel, default_frame_model
from service.reader.message import ParsedMessage, parse_message
from service.reader.scope import off_scope
from service.reader.slots import for_type, question_slots, with_defaults

SURE = 0.6
MARGIN = 0.25
ALSO = 0.15  # a second reading this likely is worth a line
FOLLOW_WEIGHT = 0.6  # how much a follow-up without words of its own keeps the previous question type
FOLLOW_CHARS = 24  # a follow-up is short: a longer message states its own question
_QUESTION_WORDS = re.compile(r"吗|是什么|为什么|怎么|如何|是否|哪个|哪些|会不会|要不要|有没有|咋|啥|多少|多大|多久|几张|几卡|"
                             r"(?<![A-Za-z])(?:what|why|how|which|does|do|is|are|can|could|should)(?![A-Za-z])",
                             re.IGNORECASE)
OWN_QUESTION = 0.6  # a follow-up whose words say what it asks this surely asks that ('改成lora的话能省多少': savings)
PARSED_CACHE = 512  # messages kept parsed: a conversation's earlier turns are read again on every turn
Confidence = Literal["sure", "unsure"]
# The frame a question type implies (a previous turn known only by its type; a case labelled before the frame)
TYPE_FRAME = {"plan": ("train", "plan"), "feasibility": ("train", "fits"), "min_gpus": ("train", "count"),
              "compare": ("train", "winner"), "savings": ("train", "savings"), "serving": ("serve", "count"),
              "diagnose": ("train", "cause"), "capacity": ("train", "capacity"), "knowledge": ("none", "howto"),
              "out_of_scope": ("none", "other"), "catalog": ("none", "price")}


@dataclass(frozen=True)
class Reading:
    text: str
    language: Literal["zh", "en"]
    parsed: ParsedMessage
    slots: dict[str, Any]  # the conversation's slots as this question type reads them (question schema)
    scores: dict[str, float]  # calibrated probability per type
    type: str
    confidence: Confidence
    alternative: str | None = None  # the second reading, when worth saying
    own_slots: dict[str, Any] = field(default_factory=dict)  # what this message alone states
    frame: Frame = field(default_factory=Frame)
    task_scores: dict[str, float] = field(default_factory=dict)
    asked_scores: dict[str, float] = field(default_factory=dict)
    # a follow-up with no question of its own ('那两张呢', 'and on JD?'): it asks the previous question again
    bare: bool = False

    def as_dict(self) -> dict[str, Any]:
        top = sorted(self.scores.items(), key=lambda kv: -kv[1])[:3]
        return {"type": self.type, "confidence": self.confidence, "alternative": self.alternative,
                "scores": {k: round(v, 3) for k, v in top}}


class ReaderUnavailable(Exception):
    """A reader that could not read this message: its provider failed, timed out or answered off the schema. The
    turn reads the message offline instead and says so (`reason`, shown in the answer's fallback line)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class FrameReader(Protocol):
    """What the turn function (service/questions/turn.py) takes: a message, the conversation's earlier user
    messages (at most `context_turns` of them, oldest first) and the previous question's type -> a Reading. The
    offline `Reader` is the default; `service.reader.llm_reader.LlmFrameReader` reads with an LLM and raises
    ReaderUnavailable when it cannot."""

    name: str
    context_turns: int

    def read(self, text: str, turns: Sequence[str] = (), prev_type: str | None = None) -> Reading: ...


def _names_model(parsed: ParsedMessage) -> bool:
    """The message names a model or a size of its own (the conversation's, in the slots, is not its own)."""
    own = {**parsed.question_slots, **parsed.slots}
    return any(k in own for k in ("model", "params_b")) or "model_mention" in parsed.extra


def _continues(text: str, x: Mapping[str, float], parsed: ParsedMessage) -> bool:
    """A short follow-up ('那京东云呢', '两张呢', 'and on JD?') that names no model of its own (the conversation's
    model, in the features, is not its own)."""
    own = {**parsed.question_slots, **parsed.slots}
    named = any(k in own for k in ("model", "params_b")) or "model_mention" in parsed.extra
    return len(text.strip()) <= FOLLOW_CHARS and bool(x.get("c:follow") or _CONTINUES.search(text)) and not named


class Reader:
    """Reads messages with one catalog's names (`model_aliases`, `gpu_aliases`: normalised name -> id; `catalog`:
    its instance families and types) and the spine's decision of the question type from a frame."""

    name = "offline"
    context_turns = 2  # the learned parts read the previous message; the slots, the two before this one

    def __init__(self, model_aliases: Mapping[str, str], gpu_aliases: Mapping[str, str], decide: Decide | None = None,
                 model: FrameModel | None = None, catalog: CatalogNames | None = None) -> None:
        self.model_aliases = model_aliases
        self.gpu_aliases = gpu_aliases
        self.catalog = catalog or CatalogNames()
        if not self.catalog.model_ids:
            self.catalog = replace(self.catalog, model_ids=frozenset(model_aliases.values()))
        self.families = self.catalog.families  # the catalog's instance families and types, lower case
        self._decide = decide
        self._model = model
        self._parsed: OrderedDict[str, ParsedMessage] = OrderedDict()
        self._lock = Lock()

    @property
    def model(self) -> FrameModel:
        return self._model or default_frame_model()

    @property
    def decide(self) -> Decide:
        if self._decide is None:
            raise RuntimeError("Reader needs the question spine's decision (service.questions.decide)")
        return self._decide

    def parse(self, text: str) -> ParsedMessage:
        """The message parsed by the finders, once: later turns of the conversation read it from the cache."""
        with self._lock:
            hit = self._parsed.get(text)
            if hit is not None:
                self._parsed.move_to_end(text)
                return hit
        parsed = parse_message(text, self.model_aliases, self.gpu_aliases)
        with self._lock:
            self._parsed[text] = parsed
            while len(self._parsed) > PARSED_CACHE:
                self._parsed.popitem(last=False)
        return parsed

    def frame_probabilities(self, text: str, turns: Sequence[str], prev_type: str | None = None
                            ) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
        """(P(task), P(asked), the features) of the last message, with the previous turn's frame as the model
        reads it (or, with no earlier text, as the previous turn's type implies)."""
        prev: dict[str, str] | None = None
        if prev_type in TYPE_FRAME and not turns:
            task, asked = TYPE_FRAME[prev_type]
            prev = {"task": task, "asked": asked}
        if turns:
            x0 = message_features(turns[-1], turns[:-1], self.parse, None, self.families)
            pt0, pa0 = self.model.task.probabilities(x0), self.model.asked.probabilities(x0)
            prev = {"task": max(pt0, key=lambda k: pt0[k]), "asked": max(pa0, key=lambda k: pa0[k])}
        x = message_features(text, turns, self.parse, prev, self.families)
        return self.model.task.probabilities(x), self.model.asked.probabilities(x), x

    def read(self, text: str, turns: Sequence[str] = (), prev_type: str | None = None) -> Reading:
        reading = self._read(text, turns, prev_type)
        talk = bool(turns) or prev_type is not None
        if talk and not reading.frame.continues and reading.type in NEEDS_A_JOB and not _names_model(reading.parsed):
            # 'how many A10s would it take?', '包月能省多少钱' after a plan: a count or a saving of no job of its
            # own is the last job's
            reading = self._read(text, turns, prev_type, follows=True)
        return reading

    def _read(self, text: str, turns: Sequence[str], prev_type: str | None, follows: bool = False) -> Reading:
        p_task, p_asked, x = self.frame_probabilities(text, turns, prev_type)
        parsed, slots = conversation_slots(text, turns, self.parse)
        own = question_slots(parsed)
        # a follow-up with no question of its own: no question words ('预算改成4500呢', '那两张呢'), or none that say
        # surely what it asks ('what about two of them?'); '改成lora的话能省多少' asks its own question
        bare = prev_type is not None and _continues(text, x, parsed) and (
            not _QUESTION_WORDS.search(text) or max(p_asked.values()) < OWN_QUESTION)
        follows = (prev_type is not None or bool(turns)) and (
            follows or continues(text, parsed, x, bare)
            or (_REFERS_BACK.search(text) is not None and not _names_model(parsed)))
        if (turns or prev_type) and not follows:
            # a new question in a conversation ('H800一小时多少钱' after a plan): read on its own, nothing carried
            p_task, p_asked, x = self.frame_probabilities(text, (), None)
            slots = own
        task = max(p_task, key=lambda k: p_task[k])
        asked = max(p_asked, key=lambda k: p_asked[k])
        frame = build_frame(parsed, own, task, asked, self.catalog, text)
        probs, pairs = type_scores(p_task, p_asked, x, frame, self.decide)
        if prev_type in probs and bare:
            # a follow-up that changes a field ('那京东云呢', 'what about fp8') asks the same question again
            probs = {t: (1 - FOLLOW_WEIGHT) * p + (FOLLOW_WEIGHT if t == prev_type else 0.0) for t, p in probs.items()}
        ranked = sorted(probs.items(), key=lambda kv: -kv[1])
        (top, p1), (second, p2) = ranked[0], ranked[1] if len(ranked) > 1 else (ranked[0][0], 0.0)
        sure = p1 >= SURE and p1 - p2 >= MARGIN
        task, asked = pairs.get(top, (task, asked))
        frame = settle(frame.model_copy(update={"task": task, "asked": asked}), text)
        if (frame.task, frame.asked) != (task, asked) or off_scope(text, frame) is not None:
            # the finders are surer (out of scope whatever the model's margin): the type follows them
            top, sure, second, p2 = self.decide(frame), True, top, 0.0
            probs = {top: 1.0, **{k: v for k, v in probs.items() if k != top}}
        frame = frame.model_copy(update={"unknowns": unknowns_for(top, own), "continues": follows})
        return Reading(text=text, language=parsed.language, parsed=parsed,
                       slots=with_defaults(for_type(slots, top), top), scores=probs, type=top,
                       confidence="sure" if sure else "unsure", alternative=None if sure or p2 < ALSO else second,
                       own_slots=for_type(own, top), frame=frame, task_scores=p_task, asked_scores=p_asked,
                       bare=bare)


# 'would that take', 'for this', '够吗': a message that points back at the last question's job
_REFERS_BACK = re.compile(r"\b(?:that|this|it|the same (?:job|run|model|setup))\b(?!\s*(?:is|means))|这个任务|这个模型|"
                          r"这样的|上面的|上述|刚才的?|同样的|够吗|够不够|够用吗|\benough\b|\bsave\b|能省|省多少", re.IGNORECASE)
# the question types that need a job (a model, a method): asked with none of its own in a conversation, the last one
NEEDS_A_JOB = frozenset({"min_gpus", "savings"})
_CONTINUES = re.compile(r"^\s*(?:那|那么|换成|改成|如果|要是|再|用)|呢\s*[?？]?\s*$|^\s*(?:and|what about|how about|what if|"
                        r"instead|same|with|using|use|or)\b|\binstead\??\s*$", re.IGNORECASE)


def continues(text: str, parsed: ParsedMessage, x: Mapping[str, float], bare: bool) -> bool:
    """The message continues the last question: a follow-up with no question of its own, one that says so ('那…
    呢', 'what about', 'instead', '换成', '改成'), or one that only changes fields of a job without naming a model."""
    return (bare or bool(x.get("c:follow")) or parsed.is_follow_up_only or bool(_CONTINUES.search(text))
            or (bool(parsed.wants_documents) and not parsed.has_workload))  # '出一份申请说明': for the last plan
