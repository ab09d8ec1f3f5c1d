"""Question type `out_of_scope`: not about choosing or sizing GPUs for ML on these clouds (the weather, a poem,
another cloud's console). The answer says what the product answers; a cloud it does not cover is named as such."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from service.questions import plan_text
from service.questions.base import AnswerBase, Ask, Context, Phrases, QuestionModule


class ScopeArgs(BaseModel):
    other_clouds: list[str] = Field(default_factory=list, description="clouds named that the product does not cover")
    greeting: bool = Field(default=False, description="a greeting or thanks, nothing asked")


class OutOfScopeAnswer(AnswerBase):
    kind: Literal["out_of_scope"] = "out_of_scope"
    other_clouds: list[str] = Field(default_factory=list)
    greeting: bool = False


def _run(ctx: Context, args: ScopeArgs) -> OutOfScopeAnswer:
    return OutOfScopeAnswer(other_clouds=args.other_clouds, greeting=args.greeting)


def _route(a: Ask) -> ScopeArgs:
    return ScopeArgs(other_clouds=list(a.frame.other_clouds), greeting=a.frame.asked == "greeting")


def _render(answer: OutOfScopeAnswer, ph: Phrases) -> str:
    if answer.greeting:
        return ph.text("greeting")
    return plan_text.render_scope(ph, answer.other_clouds, ph.lang)


MODULE = QuestionModule(
    name="out_of_scope", tool=None, title="Out of scope", args=ScopeArgs, answer=OutOfScopeAnswer, run=_run,
    route=_route, render=_render, summary=lambda o: "out of scope", follows=False, workload=False,
    frames=(("none", "other"),),
    description="Not a question about choosing or sizing GPUs for ML training or serving on these clouds.")
