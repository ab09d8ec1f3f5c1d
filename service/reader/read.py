"""The reader's entry point: a message (with the conversation's earlier user turns and the previous turn's question
type) -> a Reading: the slots the words state, the question type with calibrated probabilities, and how sure it is.

    sure          the top type's probability >= SURE and it leads the next by >= MARGIN: answer it;
    unsure        otherwise: answer the likelier reading and say in one line what else it could mean;
    out of scope  the top type is out_of_scope: say what the product answers, no plan, no figures.

The slot finders (service/reader/message.py and friends) return values and never decide the type; the classifier
(service/reader/classify.py) decides it from cues, slots and the previous type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from service.reader.classify import TypeModel, default_model
from service.reader.cues import features
from service.reader.message import ParsedMessage, parse_message
from service.reader.slots import for_type, question_slots, with_defaults

SURE = 0.6
MARGIN = 0.25
ALSO = 0.15  # a second reading this likely is worth a line
Confidence = Literal["sure", "unsure"]
# Types that need a workload to be answered; a message without one inherits the previous turn's.
WORKLOAD_TYPES = frozenset({"plan", "feasibility", "min_gpus", "compare", "savings", "serving", "diagnose"})


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

    def as_dict(self) -> dict[str, Any]:
        top = sorted(self.scores.items(), key=lambda kv: -kv[1])[:3]
        return {"type": self.type, "confidence": self.confidence, "alternative": self.alternative,
                "scores": {k: round(v, 3) for k, v in top}}


class Reader:
    """Reads messages with one catalog's names (`model_aliases`, `gpu_aliases`: normalised name -> id)."""

    def __init__(self, model_aliases: Mapping[str, str], gpu_aliases: Mapping[str, str],
                 model: TypeModel | None = None) -> None:
        self.model_aliases = model_aliases
        self.gpu_aliases = gpu_aliases
        self._model = model

    @property
    def model(self) -> TypeModel:
        return self._model or default_model()

    def parse(self, text: str) -> ParsedMessage:
        return parse_message(text, self.model_aliases, self.gpu_aliases)

    def read(self, text: str, turns: Sequence[str] = (), prev_type: str | None = None) -> Reading:
        parsed = self.parse(text)
        own = question_slots(parsed)
        merged: dict[str, Any] = {}
        for turn in turns:
            merged.update(question_slots(self.parse(turn)))
        slots = {**merged, **own}
        probs = self.model.probabilities(features(text, slots, parsed.named, prev_type))
        ranked = sorted(probs.items(), key=lambda kv: -kv[1])
        (top, p1), (second, p2) = ranked[0], ranked[1]
        sure = p1 >= SURE and p1 - p2 >= MARGIN
        return Reading(text=text, language=parsed.language, parsed=parsed, slots=with_defaults(for_type(slots, top), top), scores=probs,
                       type=top, confidence="sure" if sure else "unsure",
                       alternative=None if sure or p2 < ALSO else second, own_slots=for_type(own, top))
