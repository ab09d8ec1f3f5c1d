"""Load the labelled real questions (evals/questions/{working,test}/*.yaml) and fingerprint a split."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from service.settings import REPO_ROOT

QUESTIONS_DIR = REPO_ROOT / "evals" / "questions"
Split = Literal["working", "test"]
SPLITS: tuple[Split, ...] = ("working", "test")
TYPES = ("plan", "feasibility", "min_gpus", "compare", "savings", "serving", "diagnose", "capacity", "knowledge",
         "out_of_scope")


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    source: str
    group: str | None = None
    kind: Literal["thread", "chat"]
    lang: Literal["zh", "en"]
    turns: list[str] = Field(default_factory=list)
    text: str
    type: Literal["plan", "feasibility", "min_gpus", "compare", "savings", "serving", "diagnose", "capacity",
                  "knowledge", "out_of_scope"]
    alt_types: list[str] = Field(default_factory=list)
    slots: dict[str, Any] = Field(default_factory=dict)
    verdict: dict[str, Any] = Field(default_factory=dict)
    outcome: str = ""
    note: str = ""

    @property
    def thread(self) -> str:
        """What the split is chosen by: the source URL without its fragment, or the written batch's group."""
        return self.group if self.source == "written" and self.group else self.source.split("#", 1)[0]


def split_of(thread: str) -> Split:
    return "test" if int(hashlib.sha1(thread.encode()).hexdigest(), 16) % 5 < 2 else "working"


def split_files(split: Split, root: Path = QUESTIONS_DIR) -> list[Path]:
    return sorted((root / split).glob("*.yaml"))


def load_split(split: Split, root: Path = QUESTIONS_DIR) -> list[Question]:
    """Every question of one split, in file order. Raises ValueError naming the file when a case is malformed."""
    out: list[Question] = []
    for path in split_files(split, root):
        rows = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        for i, row in enumerate(rows):
            try:
                out.append(Question.model_validate(row))
            except ValueError as exc:
                raise ValueError(f"{path.name} case {i}: {exc}") from exc
    return out


def split_hash(split: Split, root: Path = QUESTIONS_DIR) -> str:
    """sha256 over the split's files (names and bytes): recorded in every report, so an edited split shows."""
    h = hashlib.sha256()
    for path in split_files(split, root):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()
