"""The one precise question back: routing found the question type but not a slot that changes the answer (the
model to size, the GPU asked about, the options to compare). Not a question type of its own: the answer of a
turn that asks back."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from service.questions.base import AnswerBase
from service.questions.parts import PassageRef


class ClarifyAnswer(AnswerBase):
    kind: Literal["clarify"] = "clarify"
    question_type: str = Field(description="the question type the message was read as")
    slot: str = Field(description="what the answer needs: model | gpu | options | observation | change | ...")
    passages: list[PassageRef] = Field(default_factory=list, description="what the guide says in general, meanwhile")
