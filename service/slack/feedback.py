"""👍/👎 under each answer: Slack's feedback_buttons element in a context_actions block, one turn per message.

    feedback_block(session_id, turn, "zh")   # the block; each button's value names the session, turn and rating
    parse_feedback(value)                    # Click(session_id, turn, rating, lang), or None for a value not ours

The click is stored on that turn in the session store (Assistant.rate_turn) and counted in the eval report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

Rating = Literal["up", "down"]
FEEDBACK_ACTION = "gpu_advisor_feedback"
_TEXT: dict[str, dict[Rating, tuple[str, str]]] = {  # (button text, screen-reader label)
    "zh": {"up": ("有帮助", "这个回答有帮助"), "down": ("没帮助", "这个回答没有帮助")},
    "en": {"up": ("Helpful", "This answer was helpful"), "down": ("Not helpful", "This answer was not helpful")},
}
_THANKS = {"zh": {"up": "谢谢反馈！", "down": "谢谢反馈，我们会用它改进回答。"},
           "en": {"up": "Thanks for the feedback!", "down": "Thanks: we use this to improve the answers."}}


def _value(session_id: str, turn: int, rating: Rating, lang: str) -> str:
    return json.dumps({"s": session_id, "t": turn, "r": rating, "l": lang}, separators=(",", ":"))


def feedback_block(session_id: str, turn: int, lang: str) -> dict[str, Any]:
    words = _TEXT["zh" if lang == "zh" else "en"]

    def button(rating: Rating) -> dict[str, Any]:
        text, label = words[rating]
        return {"text": {"type": "plain_text", "text": text}, "accessibility_label": label,
                "value": _value(session_id, turn, rating, "zh" if lang == "zh" else "en")}

    return {"type": "context_actions", "block_id": f"gpu_advisor_feedback_{turn}", "elements": [
        {"type": "feedback_buttons", "action_id": FEEDBACK_ACTION, "positive_button": button("up"),
         "negative_button": button("down")}]}


@dataclass(frozen=True)
class Click:
    session_id: str
    turn: int
    rating: Rating
    lang: str


def parse_feedback(value: str) -> Click | None:
    """The session, turn, rating and language a button's value names; None when it is not one of ours."""
    try:
        data = json.loads(value)
    except (TypeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    session, turn, rating = data.get("s"), data.get("t"), data.get("r")
    if not isinstance(session, str) or not session or isinstance(turn, bool) or not isinstance(turn, int) or turn < 1:
        return None
    lang = "en" if data.get("l") == "en" else "zh"
    if rating == "up":
        return Click(session, turn, "up", lang)
    if rating == "down":
        return Click(session, turn, "down", lang)
    return None


def thanks_text(lang: str, rating: Rating) -> str:
    return _THANKS["zh" if lang == "zh" else "en"][rating]
