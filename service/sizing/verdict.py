"""Does it fit: the estimate that OOMs (reserved + CUDA context + NCCL) against what the card really offers.

A card offers less than its nominal size. PyTorch's OOM message states the total it sees: "GPU 0 has a total
capacity of 79.15 GiB" on an A100 80GB, 23.69 GiB on an RTX 3090 / 4090, 39.39 GiB on an A100 40GB, 31.74 GiB on a
V100 32GB (~98.8 % of nominal), and 92.5 % on data-centre GDDR6 cards, which run with ECC on (T4 14.75 GiB of 16,
A10 22.20 GiB of 24).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from service.catalog.schema import GpuSpec
from service.sizing.types import ExpectedError

CARD_USABLE = {"hbm": 0.988, "gddr_ecc": 0.925}
TIGHT_SHARE = 0.05  # within 5 % of the card: "tight", and the answer names the setting that gives room
# The tight band widens with the estimate's expected error (its class in the validation matrix): half of that mean
# error, so a need that close to the card may well not fit. Capped at 10 %: a class read badly should not make
# every plan tight (at 25 % a 1 x A100 40G LoRA of a 7B at 91 % of the card read "tight", as did every option).
TIGHT_MAX = 0.10
BAND_OF_ERROR = 0.5
Status = Literal["fits", "tight", "does_not_fit"]


def card_capacity_gib(gpu: GpuSpec) -> float:
    ecc = gpu.memory_type.upper().startswith("GDDR") and gpu.form_factor != "consumer"
    return gpu.memory_gib * CARD_USABLE["gddr_ecc" if ecc else "hbm"]


@dataclass(frozen=True)
class Verdict:
    status: Status
    need_gib: float  # reserved + runtime per GPU
    capacity_gib: float  # what PyTorch can use on the card
    margin_gib: float  # capacity - need (negative: short by)
    band_pct: float = 100 * TIGHT_SHARE  # within this share of the card the fit is "tight"

    @property
    def margin_pct(self) -> float:
        return 100.0 * self.margin_gib / self.capacity_gib if self.capacity_gib else 0.0

    def as_dict(self) -> dict[str, object]:
        return {"status": self.status, "need_gib": round(self.need_gib, 2),
                "capacity_gib": round(self.capacity_gib, 2), "margin_gib": round(self.margin_gib, 2),
                "margin_pct": round(self.margin_pct, 1), "band_pct": round(self.band_pct, 1),
                "basis": "reserved (PyTorch caching allocator) + CUDA context + NCCL buffers"}


def tight_band(expected: ExpectedError | None) -> float:
    """Share of the card within which a fit is tight: half the estimate's expected error, 5 % to 10 %."""
    if expected is None:
        return TIGHT_SHARE
    return min(TIGHT_MAX, max(TIGHT_SHARE, BAND_OF_ERROR * expected.pct / 100))


def fit_verdict(need_gib: float, capacity_gib: float, expected: ExpectedError | None = None) -> Verdict:
    band = tight_band(expected)
    if need_gib > capacity_gib:
        status: Status = "does_not_fit"
    elif need_gib > (1 - band) * capacity_gib:
        status = "tight"
    else:
        status = "fits"
    return Verdict(status, need_gib, capacity_gib, capacity_gib - need_gib, 100 * band)
