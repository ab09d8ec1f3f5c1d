"""The one language detector: Chinese when the text has a CJK ideograph (Chinese with English terms in it is
Chinese: '4090能跑qwen2.5-14b lora吗'), English otherwise. Full-width punctuation alone does not make a text
Chinese."""

from __future__ import annotations

import re
from typing import Literal

Lang = Literal["zh", "en"]
_IDEOGRAPH = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def language_of(text: str) -> Lang:
    return "zh" if _IDEOGRAPH.search(text) else "en"
