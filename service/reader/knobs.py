"""Training knobs people state: the ZeRO stage ('zero3', 'ZeRO-2', 'ds_z3_config', 'stage 3') and the micro-batch
('bs1', 'micro bs 4', 'batch size=2', 'per_device_train_batch_size 8'). Slot finders: value and blanked text."""

from __future__ import annotations

import re

from service.reader.quantities import blank

_ZERO = re.compile(r"(?<![A-Za-z])(?:zero|ds_z|ds|deepspeed\s*zero)[\s_-]*(?:stage)?[\s_-]*(?P<n>[0-3])(?!\d)"
                   r"|(?<![A-Za-z])zero\s*stage\s*(?P<m>[0-3])(?!\d)|零冗余\s*(?P<z>[0-3])", re.IGNORECASE)
_BATCH = re.compile(
    r"(?<![A-Za-z])(?:(?:micro|mini)[\s_-]*(?:batch(?:[\s_-]*size)?|bs)|per[_\s]device[_\s]train[_\s]batch[_\s]size|mbs|bs|"
    r"batch[\s_-]*size|batch)\s*(?:=|:|：|为|是|of|设为|设成|开到|只有|才)?\s*(?P<n>\d{1,4})(?!\d|\.\d)"
    r"|(?P<m>\d{1,4})\s*(?:的)?\s*(?:micro[\s-]*batch|batch[\s-]*size|batch(?!es))(?![A-Za-z])",
    re.IGNORECASE)


def find_zero_stage(text: str) -> tuple[int | None, str]:
    m = _ZERO.search(text)
    if m is None:
        return None, text
    return int(m.group("n") or m.group("m") or m.group("z")), blank(text, m.start(), m.end())


def find_micro_batch(text: str) -> tuple[int | None, str]:
    m = _BATCH.search(text)
    if m is None:
        return None, text
    value = int(m.group("n") or m.group("m"))
    if not 1 <= value <= 4096:
        return None, text
    return value, blank(text, m.start(), m.end())
