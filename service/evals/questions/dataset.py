"""Load the labelled real questions (evals/questions/{working,test}/*.yaml) and fingerprint a split."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from service.evals.questions.labels import AnswerFacts, FrameLabel
from service.questions import registry
from service.settings import REPO_ROOT

QUESTIONS_DIR = REPO_ROOT / "evals" / "questions"
Split = Literal["working", "test"]
SPLITS: tuple[Split, ...] = ("working", "test")
TYPES = registry.TYPES  # the question spine's list, never written out again


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    source: str
    group: str | None = None
    kind: Literal["thread", "chat"]
    lang: Literal["zh", "en"]
    turns: list[str] = Field(default_factory=list)
    text: str
    type: str  # one of TYPES (checked below)
    alt_types: list[str] = Field(default_factory=list)
    slots: dict[str, Any] = Field(default_factory=dict)
    verdict: dict[str, Any] = Field(default_factory=dict)
    frame: FrameLabel | None = None  # the question frame as a careful reader sees it (labels.py)
    answer: AnswerFacts | None = None  # the facts a right answer shows in its first lines
    outcome: str = ""
    note: str = ""

    @field_validator("type")
    @classmethod
    def _known_type(cls, v: str) -> str:
        if v not in TYPES:
            raise ValueError(f"unknown question type {v!r}; one of {', '.join(TYPES)}")
        return v

    @property
    def thread(self) -> str:
        """What the split is chosen by: the source URL without its fragment, or the written batch's group."""
        return self.group if self.source == "written" and self.group else self.source.split("#", 1)[0]


# The cases labelled in December 2026 (ids from these batches) also go to test one thread in 40 more, so that the
# frozen split stays at 40 % or more of the corpus after they were added (README "Split rule").
LATER_BATCHES = ("m1-", "m2-", "m3-", "w1-", "w2-")


def split_of(thread: str, case_id: str = "") -> Split:
    h = int(hashlib.sha1(thread.encode()).hexdigest(), 16)
    if h % 5 < 2 or (case_id.startswith(LATER_BATCHES) and h % 40 == 2):
        return "test"
    return "working"


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


def check_files(paths: list[Path]) -> list[str]:
    """Problems in question files (schema, duplicate ids, a thread's split), one line each; empty when clean."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    for path in paths:
        rows = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        for i, row in enumerate(rows):
            try:
                q = Question.model_validate(row)
            except ValueError as exc:
                problems.append(f"{path}: case {i} ({row.get('id') if isinstance(row, dict) else '?'}): {exc}")
                continue
            if q.id in seen:
                problems.append(f"{path}: {q.id} also in {seen[q.id]}")
            seen[q.id] = str(path)
            if path.parent.name in SPLITS and split_of(q.thread, q.id) != path.parent.name:
                problems.append(f"{path}: {q.id} belongs to the {split_of(q.thread, q.id)} split (thread {q.thread})")
    return problems


if __name__ == "__main__":  # python -m service.evals.questions.dataset FILE... : validate question files
    import sys

    found = check_files([Path(p) for p in sys.argv[1:]] or [*split_files("working"), *split_files("test")])
    print("\n".join(found) or "ok")
    raise SystemExit(1 if found else 0)
