"""Releases the catalog knows by name but does not size (knowledge/unsized_models.yaml).

Their attention or layout is one the model schema cannot hold (DeepSeek-V4's compressed sparse attention, Gemma-4's
separate global-attention head dims), so an estimate would be another model's. Asked about one, the catalog raises
`UnsizedModelError` naming the release, what it is and why it is not sized, with the source; it is never read as a
generic decoder of the size in its name.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

from service.catalog.names import lookup, normalize
from service.errors import InvalidInputError

UNSIZED_FILE = "unsized_models.yaml"
_DEFAULT = Path(__file__).resolve().parents[2] / "knowledge" / UNSIZED_FILE


class UnsizedModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    names: tuple[str, ...] = ()
    params_b: float | None = Field(default=None, gt=0)
    active_params_b: float | None = Field(default=None, gt=0)
    released_dtype: str | None = None
    why_en: str
    why_zh: str
    source: str

    @property
    def url(self) -> str:
        """The first public URL of the source (what an answer cites)."""
        return next((w.rstrip(";,)") for w in self.source.split() if w.startswith("https://")), self.source)

    def facts(self, lang: str = "en") -> str:
        """'1600B parameters, 49B active, released in FP8' (what is published), or ''."""
        if self.params_b is None:
            return ""
        if lang == "zh":
            parts = [f"{self.params_b:g}B 参数"]
            if self.active_params_b:
                parts.append(f"激活 {self.active_params_b:g}B")
            if self.released_dtype:
                parts.append(f"以 {self.released_dtype.upper()} 发布")
            return "，".join(parts)
        parts = [f"{self.params_b:g}B parameters"]
        if self.active_params_b:
            parts.append(f"{self.active_params_b:g}B active")
        if self.released_dtype:
            parts.append(f"released in {self.released_dtype.upper()}")
        return ", ".join(parts)


class UnsizedModelError(InvalidInputError):
    """A release the catalog knows but does not size; the message says what it is and why."""

    code = "unsized_model"

    def __init__(self, name: str, row: UnsizedModel) -> None:
        facts = row.facts("en")
        what = f"{row.id} ({facts})" if facts else row.id
        asked = "" if name.strip().lower() == row.id.lower() else f"'{name}' is "
        super().__init__(
            f"{asked}{what}: known, but not sized: {row.why_en}, so any memory estimate would be another model's. "
            f"Source: {row.url}",
            "Ask about a model the catalog sizes (gpu-advisor catalog list), or give a parameter count such as 300B "
            "to size a generic decoder of that size (its KV cache will be larger than this release's).",
        )
        self.name = name
        self.row = row
        facts_zh = row.facts("zh")
        self.message_zh = (f"{row.id}{f'（{facts_zh}）' if facts_zh else ''}：已知但未收录尺寸——{row.why_zh}，"
                           f"按其他模型估算显存会是错的。来源：{row.url}")
        self.fix_zh = ("请问目录里已收录尺寸的模型（gpu-advisor catalog list），或给出参数规模（如 300B），按同规模的通用 "
                       "decoder 估算（它的 KV 缓存会比这个版本大）。")


def read_unsized(path: Path) -> tuple[UnsizedModel, ...]:
    rows = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    return tuple(UnsizedModel(**r) for r in rows)


@lru_cache(maxsize=4)
def unsized_models(path: Path = _DEFAULT) -> tuple[UnsizedModel, ...]:
    """The shipped list (empty when the file is absent)."""
    return read_unsized(path) if path.is_file() else ()


@lru_cache(maxsize=4)
def unsized_index(path: Path = _DEFAULT) -> dict[str, UnsizedModel]:
    """normalised name -> row (the id, its names, and a Hugging Face id without its organisation)."""
    index: dict[str, UnsizedModel] = {}
    for row in unsized_models(path):
        for name in (row.id, *row.names):
            index.setdefault(normalize(name), row)
            if "/" in name:
                index.setdefault(normalize(name.rsplit("/", 1)[-1]), row)
    return index


def find_unsized(name: str) -> UnsizedModel | None:
    """The unsized release a name means (chat and quantisation suffixes dropped as for catalog rows), else None."""
    index = unsized_index()
    for candidate in dict.fromkeys((name, name.rsplit("/", 1)[-1])):
        found = lookup(normalize(candidate), index)
        if found is not None:
            return found[0]
    return None
