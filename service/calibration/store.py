"""The user calibration file: rows that `gpu-advisor calibrate --save` measured on the user's own GPU.

File: `<data dir>/calibration.json` (GPU_ADVISOR_DATA_DIR, default `.data`), a JSON object {"rows": [...]}; each row
names the GPU, the model, method, sequence length, the measured and the estimated tokens/s and peak memory, the
date and the tool versions. The engine applies, per GPU, the median ratio measured / estimated tokens/s as a factor
on that GPU's large-GEMM efficiency (service/sizing/throughput.py HFU_MAX), bounded to 0.25-4.
"""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

CALIBRATION_FILE = "calibration.json"
FACTOR_BOUNDS = (0.25, 4.0)


class CalibrationRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gpu: str = Field(description="GpuSpec.id the row was measured on")
    gpu_name: str = ""
    model: str
    method: str
    seq_len: int = Field(gt=0)
    micro_batch: int = Field(default=1, gt=0)
    gpu_count: int = Field(default=1, gt=0)
    measured_tokens_per_s: float = Field(gt=0)
    estimated_tokens_per_s: float = Field(gt=0)
    measured_max_reserved_gib: float = Field(ge=0)
    measured_max_allocated_gib: float = Field(ge=0)
    estimated_gib: float = Field(ge=0)
    date: str
    versions: dict[str, str] = Field(default_factory=dict)
    source: str = "gpu-advisor calibrate"


class CalibrationFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rows: list[CalibrationRow] = Field(default_factory=list)


def calibration_path(data_dir: Path | None = None) -> Path:
    if data_dir is None:
        from service.settings import get_settings

        data_dir = get_settings().data_dir
    return Path(data_dir) / CALIBRATION_FILE


def load_rows(path: Path) -> list[CalibrationRow]:
    if not path.is_file():
        return []
    try:
        return CalibrationFile.model_validate(json.loads(path.read_text(encoding="utf-8"))).rows
    except (OSError, ValueError, ValidationError):
        return []  # a broken user file must not break planning; `calibrate --save` rewrites it whole


def save_row(row: CalibrationRow, path: Path) -> int:
    """Append a row (atomically) and return how many rows the file holds."""
    rows = [*load_rows(path), row]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(CalibrationFile(rows=rows).model_dump_json(indent=2), encoding="utf-8")
    os.replace(tmp, path)
    return len(rows)


def factors(rows: list[CalibrationRow]) -> dict[str, float]:
    by_gpu: dict[str, list[float]] = {}
    for r in rows:
        by_gpu.setdefault(r.gpu, []).append(r.measured_tokens_per_s / r.estimated_tokens_per_s)
    lo, hi = FACTOR_BOUNDS
    return {g: min(hi, max(lo, statistics.median(v))) for g, v in by_gpu.items()}


_CACHE: dict[str, tuple[float, dict[str, float]]] = {}


def calibration_factors(path: Path | None = None) -> dict[str, float]:
    """Per-GPU factors from the user file (cached on the file's mtime); {} when there is none."""
    p = path or calibration_path()
    try:
        mtime = p.stat().st_mtime
    except OSError:
        return {}
    hit = _CACHE.get(str(p))
    if hit is not None and hit[0] == mtime:
        return hit[1]
    out = factors(load_rows(p))
    _CACHE[str(p)] = (mtime, out)
    return out


def describe(rows: list[CalibrationRow]) -> list[dict[str, Any]]:
    return [r.model_dump() for r in rows]
