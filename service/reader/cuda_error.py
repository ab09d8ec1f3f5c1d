"""The figures of a pasted out-of-memory error: PyTorch's CUDA OOM (both its formats) and vLLM's start-up check.
A slot finder: the figures in GiB as the error prints them, nothing decided.

    torch >= 2.1  "Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.20 GiB is free.
                  Process 1234 has 10.30 GiB memory in use. Including non-PyTorch memory, this process has
                  12.10 GiB memory in use."   (each 'Process N has' is another process on the card)
    older torch   "Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB total capacity; 20.10 GiB already allocated;
                  1.20 GiB free; 21.00 GiB reserved in total by PyTorch)"
    vLLM          "Free memory on device (10.5/23.6 GiB) on startup is less than desired GPU memory utilization
                  (0.9, 21.2 GiB)"
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUM = r"(?P<n>\d+(?:\.\d+)?)\s*(?P<u>[KMGT]i?B)"
_UNIT_GIB = {"K": 1 / 1024**2, "M": 1 / 1024, "G": 1.0, "T": 1024.0}


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_ALLOCATE = _c(r"tried\s+to\s+allocate\s+" + _NUM)
_TOTAL = _c(r"total\s+capacity\s+of\s+" + _NUM + r"|" + _NUM.replace("n>", "n2>").replace("u>", "u2>")
            + r"\s+total\s+capacity")
_FREE = _c(r"of\s+which\s+" + _NUM + r"\s+is\s+free|" + _NUM.replace("n>", "n2>").replace("u>", "u2>")
           + r"\s+free(?![a-z])")
_THIS = _c(r"this\s+process\s+has\s+" + _NUM + r"\s+memory\s+in\s+use|" + _NUM.replace("n>", "n2>").replace(
    "u>", "u2>") + r"\s+reserved\s+in\s+total\s+by\s+pytorch")
_OTHER = _c(r"process\s+\d+\s+has\s+" + _NUM + r"\s+memory\s+in\s+use")
_VLLM_FREE = _c(r"free\s+memory\s+on\s+device\s*\(\s*(?P<free>\d+(?:\.\d+)?)\s*/\s*(?P<total>\d+(?:\.\d+)?)\s*GiB\s*\)")


@dataclass(frozen=True)
class CudaError:
    allocate_gb: float | None = None
    card_gb: float | None = None
    free_gb: float | None = None
    process_gb: float | None = None  # this process's memory in use (or what PyTorch reserved, older format)
    other_gb: float | None = None  # other processes on the card

    @property
    def found(self) -> bool:
        return any(v is not None for v in (self.allocate_gb, self.card_gb, self.free_gb, self.process_gb,
                                           self.other_gb))


def _gib(m: re.Match[str] | None) -> float | None:
    if m is None:
        return None
    g = m.groupdict()
    n, u = (g["n"], g["u"]) if g.get("n") else (g["n2"], g["u2"])
    return round(float(n) * _UNIT_GIB[u[0].upper()], 2)


def find_cuda_error(text: str) -> CudaError:
    """The figures of the OOM error pasted in `text` (all None when there is none)."""
    vllm = _VLLM_FREE.search(text)
    if vllm is not None:
        total, free = float(vllm.group("total")), float(vllm.group("free"))
        return CudaError(card_gb=total, free_gb=free, other_gb=round(max(0.0, total - free), 2))
    if _ALLOCATE.search(text) is None and _TOTAL.search(text) is None:
        return CudaError()
    others = [_gib(m) for m in _OTHER.finditer(text)]
    return CudaError(allocate_gb=_gib(_ALLOCATE.search(text)), card_gb=_gib(_TOTAL.search(text)),
                     free_gb=_gib(_FREE.search(text)), process_gb=_gib(_THIS.search(text)),
                     other_gb=round(sum(x for x in others if x is not None), 2) if others else None)
