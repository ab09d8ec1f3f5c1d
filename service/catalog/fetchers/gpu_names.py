"""GPU model strings as the clouds' APIs write them → our GPU ids (knowledge/catalog/gpus.yaml).

Tencent gives `GpuType` ("NVIDIA T4") and `GpuMemory` per card, or only free text in `Remark`
("8 * NVIDIA A100"); JD gives `gpu.model` ("Tesla V100") and no memory. Resolution, in order: the family named
in the text; the memory size (API field, else a size in the text); the form factor when the text says PCIe or
SXM/NVLink; the id the catalog already has for that instance type or family (`hint`); else the SXM form, the one
the clouds sell (as gpus.yaml's `default_for`). A family whose memory size cannot be told is left unmapped: a
wrong GPU is worse than a missing row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# family → (memory per card GiB, default id, PCIe id); None where gpus.yaml has no such SKU.
_FAMILIES: dict[str, tuple[tuple[float, str | None, str | None], ...]] = {
    "B200": ((180, "B200", None),),
    "H200": ((141, "H200-SXM", None),),
    "H100": ((80, "H100-SXM", "H100-PCIE"),),
    "H800": ((80, "H800-SXM", "H800-PCIE"),),
    "H20": ((96, "H20", None),),
    "A800": ((40, "A800-40G-PCIE", "A800-40G-PCIE"), (80, "A800-80G-SXM", "A800-80G-PCIE")),
    "A100": ((40, "A100-40G-SXM", "A100-40G-PCIE"), (80, "A100-80G-SXM", "A100-80G-PCIE")),
    "V100": ((16, "V100-16G-SXM2", "V100-16G-PCIE"), (32, "V100-32G-SXM2", "V100-32G-PCIE")),
    "L40S": ((48, "L40S", "L40S"),),
    "L40": ((48, "L40", "L40"),),
    "L20": ((48, "L20", "L20"),),
    "L4": ((24, "L4", "L4"),),
    "A40": ((48, "A40", "A40"),),
    "A30": ((24, "A30", "A30"),),
    "A10G": ((24, "A10G", "A10G"),),
    "A10": ((24, "A10", "A10"),),
    "T4": ((16, "T4", "T4"),),
    "P40": ((24, "P40", "P40"),),
    "P4": ((8, "P4", "P4"),),
}
# A family name standing alone: "A10" is not "A100", "V100" is not "V100S", "H20" is not "H20-3e" (141 GB).
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(" + "|".join(sorted(_FAMILIES, key=len, reverse=True)) + r")(?![0-9A-Za-z])(?![-\s]?3e)",
    re.IGNORECASE,
)
_MEMORY = re.compile(r"(?<![0-9.])(\d{1,3}(?:\.\d+)?)\s*G(?:B|iB)?(?![A-Za-z])", re.IGNORECASE)
_PCIE = re.compile(r"pcie", re.IGNORECASE)
_SXM = re.compile(r"sxm|nvlink", re.IGNORECASE)
_WINDOW = 24  # characters after the family name that still describe it ("A100-SXM4-80GB")


@dataclass(frozen=True)
class GpuResolution:
    gpu_id: str | None
    card_memory_gib: float = 0.0
    reason: str = ""  # why gpu_id is None


@dataclass(frozen=True)
class _Found:
    family: str
    memory_gib: float | None
    form: str  # "pcie", "sxm" or ""


def _family_in(text: str) -> _Found | None:
    m = _TOKEN.search(text)
    if m is None:
        return None
    tail = text[m.end() : m.end() + _WINDOW]
    mem = _MEMORY.search(tail)
    form = "pcie" if _PCIE.search(tail) else "sxm" if _SXM.search(tail) else ""
    return _Found(m.group(1).upper(), float(mem.group(1)) if mem else None, form)


def resolve_gpu(texts: Sequence[str], memory_gib: float | None = None, hint: str | None = None) -> GpuResolution:
    """Map the first text that names a known GPU family. memory_gib: per card, from the API; hint: our id
    for this instance type (or its family) in the current catalog."""
    shown = next((t for t in texts if t.strip()), "")
    found = next((f for f in (_family_in(t) for t in texts if t) if f is not None), None)
    if found is None:
        return GpuResolution(None, reason=f"unknown GPU model {shown!r}" if shown else "no GPU model in the response")
    entries = _FAMILIES[found.family]
    memory = memory_gib if memory_gib and memory_gib > 0 else found.memory_gib
    if memory is not None:
        sized = [e for e in entries if abs(e[0] - memory) <= 0.1 * e[0]]
        if not sized and len(entries) == 1 and memory < entries[0][0]:
            sized = list(entries)  # a vGPU slice reports the slice's memory
        if not sized:
            return GpuResolution(None, reason=f"{found.family} with {memory:g} GiB per card has no catalog id")
    else:
        sized = list(entries)
    ids = [(e[0], e[2] if found.form == "pcie" else e[1]) for e in sized]
    if found.form == "":
        ids += [(e[0], e[2]) for e in sized]
    by_hint = next(((mem, i) for mem, i in ids if i is not None and i == hint), None)
    if by_hint is not None:
        return GpuResolution(by_hint[1], by_hint[0])
    if len(sized) > 1:
        sizes = " or ".join(f"{e[0]:g} GiB" for e in sized)
        return GpuResolution(None, reason=f"{shown!r}: {found.family} without a memory size ({sizes}) is ambiguous")
    card_memory, gpu_id = ids[0]
    if gpu_id is None:
        return GpuResolution(None, reason=f"{found.family} {card_memory:g} GiB {found.form} has no catalog id".replace("  ", " "))
    return GpuResolution(gpu_id, card_memory)
