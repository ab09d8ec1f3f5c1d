"""Characters a reader cannot see: zero-width spaces and joiners, the byte-order mark, the soft hyphen and the
bidirectional controls (RLO, LRI ... PDI, the marks). Pasted text carries them, and a hostile one hides in them:
'A\u200b1\u200b0\u200b0 多少钱' must read as 'A100 多少钱', not as a question about another card, and
'\u202eqwen2.5-7b lora 4090\u202c 能跑吗' as the question it shows.

    visible(text) -> the text without them (a message's stored copy keeps them: nothing the user sent is lost)
"""

from __future__ import annotations

import re

# U+00AD soft hyphen, U+061C Arabic letter mark, U+180E Mongolian vowel separator, U+200B-U+200F zero-width space,
# non-joiner, joiner, LRM, RLM, U+202A-U+202E embeddings and overrides, U+2060-U+2064 word joiner and invisible
# operators, U+2066-U+2069 isolates, U+FEFF byte-order mark
INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def visible(text: str) -> str:
    return INVISIBLE.sub("", text)
