"""Optional LLM judge of the answers' prose (`--judge`): a 1-5 score with a one-line reason per scenario.

Off by default. It needs an OpenAI-compatible model (GPU_ADVISOR_LLM=openai and its settings); otherwise the
report says the judge is unavailable. The figures are never judged here: the engine checks them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from service.evals.dataset import EVALS_DIR
from service.settings import Settings

PROMPT_FILE = EVALS_DIR / "prompts" / "judge.md"
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


@dataclass
class Judge:
    llm: Any
    template: str

    def grade(self, turns: list[str], answer: str, facts: dict[str, Any] | None) -> dict[str, Any]:
        from langchain_core.messages import HumanMessage

        prompt = self.template.format(question="\n".join(f"- {t}" for t in turns), answer=answer[:6000],
                                      facts=json.dumps(facts, ensure_ascii=False))
        try:
            reply = self.llm.invoke([HumanMessage(prompt)])
        except Exception as exc:  # provider error: recorded for this scenario, the run goes on
            return {"score": None, "reason": f"judge call failed: {type(exc).__name__}: {exc}"}
        return parse_grade(str(getattr(reply, "content", reply)))


def parse_grade(text: str) -> dict[str, Any]:
    m = _OBJECT.search(text)
    try:
        data = json.loads(m.group(0)) if m else {}
    except ValueError:
        data = {}
    score = data.get("score") if isinstance(data, dict) else None
    if not isinstance(score, int | float) or not 1 <= score <= 5:
        return {"score": None, "reason": f"unreadable judge reply: {text[:200]}"}
    return {"score": float(score), "reason": str(data.get("reason", ""))[:300]}


def build_judge(settings: Settings) -> tuple[Judge | None, str]:
    """The judge, or None and why it is unavailable."""
    if settings.llm != "openai":
        return None, ("LLM judge unavailable: set GPU_ADVISOR_LLM=openai with GPU_ADVISOR_LLM_MODEL, "
                      "GPU_ADVISOR_LLM_BASE_URL and GPU_ADVISOR_LLM_API_KEY.")
    try:
        from service.assistant.llm import build_llm

        llm = build_llm(settings)
        template = PROMPT_FILE.read_text(encoding="utf-8")
    except Exception as exc:  # missing model name, package or prompt file
        return None, f"LLM judge unavailable: {exc}"
    return Judge(llm, template), ""
