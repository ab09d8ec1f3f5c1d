"""The classifier's training examples: the working split of evals/questions (real and chat-style questions with
their labelled type) and evals/scenarios.yaml (the question types of earlier issues), each reduced to its feature
vector. The frozen test split is never read here."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from service.reader.cues import features
from service.reader.message import ParsedMessage
from service.reader.slots import question_slots

Parse = Callable[[str], ParsedMessage]


@dataclass(frozen=True)
class Example:
    text: str
    label: str
    group: str  # the source thread (or written batch): cross-validation folds never split one
    turns: tuple[str, ...] = ()
    weight: float = 1.0
    alt: tuple[str, ...] = ()  # other readings the label accepts
    id: str = ""


def conversation_features(parse: Parse, turns: tuple[str, ...], text: str, prev_type: str | None) -> dict[str, float]:
    """Features of the last message, with the slots of the conversation so far (earlier turns' slots, then the
    message's own on top) and the previous turn's question type."""
    merged: dict[str, object] = {}
    named: Mapping[str, int] = {}
    for turn in (*turns, text):
        parsed = parse(turn)
        merged.update(question_slots(parsed))
        named = parsed.named
    last = parse(text)
    own = question_slots(last)
    slots = {**merged, **own} if turns else own
    return features(text, slots, named, prev_type)


def training_set_hash(examples: list[Example]) -> str:
    h = hashlib.sha256()
    for e in examples:
        h.update("\x1f".join((*e.turns, e.text, e.label, e.group)).encode() + b"\x1e")
    return h.hexdigest()
