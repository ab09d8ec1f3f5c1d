"""Other clouds' list prices for the GPUs this catalog plans on: a reference, never planned on.

knowledge/catalog/reference_prices.csv holds dated, sourced per-instance list prices from Alibaba Cloud, Volcano Engine,
Huawei Cloud and Baidu AI Cloud (service/catalog/fetchers/reference_apis.py reads their official price APIs when the
SDK and keys are there). The planner never prices a plan with them; under a plan they are one comparison line:
"同款 A10 在阿里云约 ¥9.53/卡时（2026-09，官网价，第三方采集；仅供参考，不参与方案计算）".
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

REFERENCE_FILE = "catalog/reference_prices.csv"
RefCloud = Literal["aliyun", "volcengine", "huaweicloud", "baidu"]
CLOUD_NAMES: dict[str, tuple[str, str]] = {"aliyun": ("Alibaba Cloud", "阿里云"), "volcengine": ("Volcano Engine", "火山引擎"),
                                           "huaweicloud": ("Huawei Cloud", "华为云"), "baidu": ("Baidu AI Cloud", "百度智能云")}
_BASIS = {"api": ("official price API", "官方价格接口"), "page": ("official price page", "官网价格页"),
          "capture": ("official list price, third-party capture", "官网价，第三方采集")}


class ReferencePrice(BaseModel):
    """One instance's (or one GPU queue's) pay-as-you-go list price on a cloud this catalog does not plan on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cloud: RefCloud
    product: str = Field(description="ECS, 机器学习平台通用队列 ...: what the price is for")
    instance_type: str = Field(default="", description="the cloud's instance type; empty when the source names none")
    gpu: str = Field(description="a GpuSpec id of knowledge/catalog/gpus.yaml")
    gpu_count: int = Field(gt=0)
    vcpus: int | None = Field(default=None, gt=0)
    memory_gib: float | None = Field(default=None, gt=0)
    price_cny: float = Field(gt=0, allow_inf_nan=False, description="per instance per hour, pay as you go")
    region: str = ""
    as_of: date = Field(description="the day the price was read from the cloud's page or API")
    basis: Literal["api", "page", "capture"]
    source: str = Field(description="the public URL this row was read from")
    page: str = Field(default="", description="the cloud's own page or API the price is from (when source is a capture)")
    note_en: str = ""
    note_zh: str = ""

    @field_validator("vcpus", "memory_gib", mode="before")
    @classmethod
    def _blank(cls, v: object) -> object:
        return None if v == "" else v

    @property
    def per_gpu_cny(self) -> float:
        return self.price_cny / self.gpu_count


def read_reference(path: Path) -> tuple[ReferencePrice, ...]:
    with path.open(encoding="utf-8", newline="") as fh:
        return tuple(ReferencePrice(**{k: v for k, v in row.items() if k}) for row in csv.DictReader(fh))


def references_for(gpu_id: str, rows: Iterable[ReferencePrice]) -> list[ReferencePrice]:
    """The cheapest row per cloud for this GPU, cheapest cloud first."""
    best: dict[str, ReferencePrice] = {}
    for r in rows:
        if r.gpu == gpu_id and (r.cloud not in best or r.per_gpu_cny < best[r.cloud].per_gpu_cny):
            best[r.cloud] = r
    return sorted(best.values(), key=lambda r: r.per_gpu_cny)


def reference_line(gpu_id: str, gpu_label: str, rows: Iterable[ReferencePrice], lang: str) -> str:
    """'同款 A10 在阿里云约 ¥9.53/卡时（2026-09，官网价，第三方采集）…' or '' when no other cloud's price is known."""
    refs = references_for(gpu_id, rows)
    if not refs:
        return ""
    zh = lang == "zh"
    parts = []
    for r in refs:
        name = CLOUD_NAMES[r.cloud][1 if zh else 0]
        per = f"¥{r.per_gpu_cny:,.2f}/卡时" if zh else f"¥{r.per_gpu_cny:,.2f} per GPU-hour"
        parts.append(f"{name}约 {per}" if zh else f"{name} about {per}")
    whens = sorted({(r.as_of.strftime("%Y-%m"), _BASIS[r.basis][1 if zh else 0]) for r in refs})
    when = "；".join(f"{m}，{b}" for m, b in whens) if zh else "; ".join(f"{m}, {b}" for m, b in whens)
    if zh:
        return f"同款 {gpu_label} 在" + "、".join(parts) + f"（{when}；仅供参考，不参与方案计算）"
    return f"The same {gpu_label} on " + ", ".join(parts) + f" ({when}; a reference, not planned on)."
