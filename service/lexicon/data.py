"""knowledge/lexicon.yaml, validated and read once (on first use, never at import)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from service.settings import REPO_ROOT
from service.yamlio import load_yaml

LEXICON_FILE = REPO_ROOT / "knowledge" / "lexicon.yaml"


class Entry(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    zh: str
    en: str
    names: list[str] = Field(default_factory=list)


class Stage(Entry):
    ref_model: bool = False
    seqs: int = Field(default=1, ge=1, le=8)
    models: int = Field(default=0, ge=0, le=4)


class Clouds(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    covered: dict[str, Entry]
    other: dict[str, Entry]


class Lexicon(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    clouds: Clouds
    regions: dict[str, Entry]
    methods: dict[str, Entry]
    stages: dict[str, Stage]
    billing: dict[str, Entry]
    objectives: dict[str, Entry]
    engines: dict[str, Entry]
    weights: dict[str, Entry]
    question_types: dict[str, Entry]

    def labels(self, kind: str, lang: str) -> dict[str, str]:
        """{code: label} for one vocabulary ('methods', 'billing', 'clouds', ...) in one language."""
        table: dict[str, Entry] = dict(self.clouds.covered) | dict(self.clouds.other) if kind == "clouds" \
            else getattr(self, kind)
        return {code: (e.zh if lang == "zh" else e.en) for code, e in table.items()}

    def other_clouds_in(self, text: str) -> list[str]:
        """Codes of clouds we do not cover that the text names ('阿里云', 'AWS'), in order."""
        found = []
        for code, e in self.clouds.other.items():
            for name in e.names:
                m = re.search(rf"(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])", text, re.IGNORECASE)
                if m:
                    found.append((m.start(), code))
                    break
        return [code for _, code in sorted(found)]


    def region_in(self, text: str) -> str | None:
        """The first city or area the text names ('广州', 'Shanghai', 'cn-north-1'), as its code."""
        found = []
        for code, e in self.regions.items():
            for name in e.names:
                m = re.search(rf"(?<![A-Za-z]){re.escape(name)}(?![A-Za-z0-9])", text, re.IGNORECASE)
                if m:
                    found.append((m.start(), code))
                    break
        return min(found)[1] if found else None

    def region_rows(self, code: str) -> list[str]:
        """The catalog's region names for one city ('guangzhou' -> ['Guangzhou', 'cn-south-1'])."""
        e = self.regions[code]
        return [e.en] + [n for n in e.names if n.startswith("cn-")]


def load_lexicon(path: Path = LEXICON_FILE) -> Lexicon:
    data: Any = load_yaml(path.read_text(encoding="utf-8"))
    return Lexicon.model_validate(data)


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    return load_lexicon()


def label(kind: str, code: str, lang: str) -> str:
    """One label: label('methods', 'lora', 'zh') -> 'LoRA 微调'; the code itself when the lexicon lacks it."""
    return lexicon().labels(kind, lang).get(code, code)
