"""The LLM reader never invents a figure: every number in its frame must be one the user wrote, in the message or
the earlier messages it read, as written or in one of the units the frame converts to.

    stated_numbers(texts) -> frozenset[float]
    is_stated(value, numbers) -> bool
    drop_unstated(draft, texts) -> (draft without the unstated figures, [(field path, value), ...])

A number as written is what service/reader/numbers.py reads ('10万' = 1e5, '4k' = 4000, '两' = 2, 'eight' = 8),
and also its bare digits ('7' of '7B'). The conversions the schema asks for are allowed on top: thousands and
binary thousands ('4k' -> 4096 tokens), MB <-> GB, seconds -> ms, days / weeks / months -> hours ('3天' = 72),
minutes -> hours, 亿 parameters -> billions ('70亿' = 7), and the product of two neighbours ('2机8卡' = 16,
'2x8' = 16). Anything else (a memory need, a price, a count the LLM worked out) is dropped and noted. The guard is
deliberately loose about units and strict about figures: an invented 123.4 never passes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import TypeVar

from pydantic import BaseModel

from service.reader.numbers import MULT, NUM, parse_number

_NUMBER = re.compile(rf"({NUM})({MULT})?")
_WORDS = {"单": 1.0, "双": 2.0, "single": 1.0, "dual": 2.0, "a pair": 2.0, "half": 0.5, "半": 0.5}
# units the frame converts to (see the module docstring); each is applied to each number as written
SCALES = (1.0, 1e3, 1024.0, 1e-3, 1 / 1024, 1e-9, 1e-6, 24.0, 168.0, 720.0, 1 / 60, 60.0)
NOT_FIGURES = frozenset({"asked_setup"})  # an index into the draft's own setups, not a figure of the message
REL_TOL = 2e-3  # '1.5万' read as 15000, a rounding of 1/1024 ...

M = TypeVar("M", bound=BaseModel)


def stated_numbers(texts: Iterable[str]) -> frozenset[float]:
    """Every number the texts state, as written and scaled by each of SCALES, plus neighbours' products."""
    written: list[float] = []
    for text in texts:
        low = text.lower()
        written += [v for w, v in _WORDS.items() if w in low]
        for m in _NUMBER.finditer(text):
            full = parse_number(m.group(0))
            bare = parse_number(m.group(1))
            digits = re.findall(r"\d+(?:\.\d+)?", m.group(1).replace(",", ""))
            seen = [v for v in (full, bare) if v is not None] + [float(d) for d in digits]
            written += list(dict.fromkeys(seen))
    products = [a * b for a, b in zip(written, written[1:], strict=False)]
    return frozenset(v * s for v in (*written, *products) for s in SCALES if v)


def is_stated(value: float, numbers: frozenset[float]) -> bool:
    """`value` is one of `numbers` (within REL_TOL)."""
    return any(math.isclose(value, n, rel_tol=REL_TOL) for n in numbers)


def _drop(model: M, numbers: frozenset[float], path: str) -> tuple[M, list[tuple[str, float]]]:
    updates: dict[str, object] = {}
    dropped: list[tuple[str, float]] = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        where = f"{path}{name}"
        new: object
        if name in NOT_FIGURES or isinstance(value, bool) or value is None:
            continue
        if isinstance(value, BaseModel):
            new, lost = _drop(value, numbers, f"{where}.")
        elif isinstance(value, list) and any(isinstance(v, BaseModel) for v in value):
            pairs = [_drop(v, numbers, f"{where}[{i}].") for i, v in enumerate(value)]
            new, lost = [p[0] for p in pairs], [d for p in pairs for d in p[1]]
        elif isinstance(value, int | float):
            new, lost = None, ([] if is_stated(float(value), numbers) else [(where, float(value))])
        else:
            continue
        if lost:
            updates[name] = new
            dropped += lost
    return (model.model_copy(update=updates) if updates else model), dropped


def drop_unstated(draft: M, texts: Iterable[str]) -> tuple[M, list[tuple[str, float]]]:
    """`draft` with every figure the texts do not state set to None, and what was dropped (path, value)."""
    return _drop(draft, stated_numbers(texts), "")
