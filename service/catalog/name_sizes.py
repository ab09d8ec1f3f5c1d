"""What a model's name states about it: its size ('gemma-4-9b' -> 9B, 'xxx-1.5b'), an MoE's active size
('Foo-235B-A22B'), and a family hint (bge/bert/roberta/e5 -> encoder; '-VL'/'vision' -> a vision-language decoder;
sd/stable diffusion/sdxl/flux -> diffusion). Pure parsing; service/planner/name_hints.py sizes from it."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SIZE = re.compile(r"(?<![0-9.])(\d+(?:\.\d+)?)\s*([bm])(?![A-Za-z0-9])", re.IGNORECASE)  # 'llama70b' too
_ACTIVE = re.compile(r"(?<![A-Za-z0-9])a(\d+(?:\.\d+)?)b(?![A-Za-z0-9])", re.IGNORECASE)  # '-A22B': active
_ENCODER = re.compile(r"(?<![a-z])(?:bge|bert|roberta|deberta|e5|ernie(?![\s_-]*[45])|xlm|m3e|text2vec|gte)(?![a-z])", re.IGNORECASE)
_VISION = re.compile(r"(?<![a-z])(?:vl|vision|visual|llava|vlm|mllm)(?![a-z])", re.IGNORECASE)
_DIFFUSION = re.compile(r"(?<![a-z])(?:sd|sdxl|stable[\s_-]*diffusion|flux|diffusion|unet)(?![a-z])", re.IGNORECASE)


@dataclass(frozen=True)
class NameGuess:
    kind: str  # decoder | encoder | diffusion
    params_b: float | None
    vision: bool = False
    active_b: float | None = None  # an MoE's active size ('235B-A22B')


_B_INFIX = re.compile(r"(?<![0-9.])(\d+)b(\d)(?![0-9A-Za-z])", re.IGNORECASE)  # 'bloom-1b7', 'bloom-7b1': 1.7B, 7.1B


def guess_from_name(name: str) -> NameGuess | None:
    """What the name says, or None when it says neither a size nor a family."""
    name = _B_INFIX.sub(lambda m: f"{m.group(1)}.{m.group(2)}b", name)
    actives = [float(m.group(1)) for m in _ACTIVE.finditer(name)]
    plain = _ACTIVE.sub(" ", name)
    sizes = [float(m.group(1)) / (1 if m.group(2).lower() == "b" else 1000) for m in _SIZE.finditer(plain)]
    size = sizes[-1] if sizes else None  # 'yi-1.5-9b': the last size is the parameter count
    active = actives[-1] if actives and size and actives[-1] < size else None
    if _DIFFUSION.search(name):
        return NameGuess("diffusion", size)
    if _ENCODER.search(name):
        return NameGuess("encoder", size)
    if size is None:
        return None
    return NameGuess("decoder", size, vision=bool(_VISION.search(name)), active_b=active)
